package schedcore

import (
	"slices"
	"sort"

	resourceapi "k8s.io/api/resource/v1"
)

// deviceKey names a device: driver, pool, device.
type deviceKey struct{ driver, pool, device string }

// ClaimsAllocatingDevice lists the claims (latest versions, in-flight ones
// included) whose allocation holds the device, for explanations. The
// claims holding each device are indexed at once, for every device, and
// the index is kept until a claim or an in-flight allocation changes: an
// explanation asks for every device of the nodes it shows.
func (m *DRAManager) ClaimsAllocatingDevice(driver, pool, device string) []*resourceapi.ResourceClaim {
	m.mu.RLock()
	defer m.mu.RUnlock()
	m.holdersMu.Lock()
	defer m.holdersMu.Unlock()
	if m.holders == nil || m.holdersRev != m.claimsRev {
		m.holders, m.holdersRev = m.holdersLocked(), m.claimsRev
	}
	return slices.Clone(m.holders[deviceKey{driver, pool, device}])
}

// holdersLocked indexes the claims (latest versions, then in-flight ones)
// by the devices their allocations hold, each device's list sorted by
// namespace/name.
func (m *DRAManager) holdersLocked() map[deviceKey][]*resourceapi.ResourceClaim {
	out := map[deviceKey][]*resourceapi.ResourceClaim{}
	add := func(c *resourceapi.ResourceClaim) {
		if c == nil || c.Status.Allocation == nil {
			return
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			k := deviceKey{r.Driver, r.Pool, r.Device}
			if l := out[k]; len(l) == 0 || l[len(l)-1] != c {
				out[k] = append(l, c)
			}
		}
	}
	for _, e := range m.claims {
		add(e.latest())
	}
	for _, f := range m.inFlight {
		add(f.claim)
	}
	for _, l := range out {
		sort.Slice(l, func(i, j int) bool {
			return l[i].Namespace+"/"+l[i].Name < l[j].Namespace+"/"+l[j].Name
		})
	}
	return out
}

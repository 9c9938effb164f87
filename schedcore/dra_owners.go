package schedcore

import (
	"slices"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The owners index files each claim (namespace/name) under the UIDs of
// its owners, in every version the manager held (the API's and the
// assumed one): a claim whose latest version names an owner is always
// filed under it. A key may outlive its claim or owner (a deleted claim,
// an older version's owner): ClaimsOwnedBy checks the latest version.

// indexOwnersLocked files the claim version c under its owners.
func (m *DRAManager) indexOwnersLocked(c *resourceapi.ResourceClaim) {
	if len(c.OwnerReferences) == 0 {
		return
	}
	if m.owners == nil {
		m.owners = map[types.UID]map[string]bool{}
	}
	k := c.Namespace + "/" + c.Name
	for _, or := range c.OwnerReferences {
		keys := m.owners[or.UID]
		if keys == nil {
			keys = map[string]bool{}
			m.owners[or.UID] = keys
		}
		keys[k] = true
	}
}

// unindexOwnersLocked takes the claim version c out of the index.
func (m *DRAManager) unindexOwnersLocked(c *resourceapi.ResourceClaim) {
	if c == nil {
		return
	}
	k := c.Namespace + "/" + c.Name
	for _, or := range c.OwnerReferences {
		if keys := m.owners[or.UID]; keys != nil {
			delete(keys, k)
			if len(keys) == 0 {
				delete(m.owners, or.UID)
			}
		}
	}
}

// ClaimsOwnedBy lists the latest version of every claim with an owner of
// that UID, by namespace/name (as Claims orders them): what a scan of
// Claims for the owner finds, without reading every claim.
func (m *DRAManager) ClaimsOwnedBy(uid types.UID) []*resourceapi.ResourceClaim {
	m.mu.RLock()
	defer m.mu.RUnlock()
	keys := make([]string, 0, len(m.owners[uid]))
	for k := range m.owners[uid] {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []*resourceapi.ResourceClaim
	for _, k := range keys {
		e := m.claims[k]
		if e == nil {
			continue
		}
		l := e.latest()
		if l != nil && slices.ContainsFunc(l.OwnerReferences, func(or metav1.OwnerReference) bool { return or.UID == uid }) {
			out = append(out, l)
		}
	}
	return out
}

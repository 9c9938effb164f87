package schedcore

// DefaultBindAllHostIP is the wildcard host IP.
const DefaultBindAllHostIP = "0.0.0.0"

// ProtocolPort is a protocol and port pair.
type ProtocolPort struct {
	Protocol string
	Port     int32
}

// NewProtocolPort defaults an empty protocol to TCP.
func NewProtocolPort(protocol string, port int32) ProtocolPort {
	if protocol == "" {
		protocol = "TCP"
	}
	return ProtocolPort{Protocol: protocol, Port: port}
}

// HostPortInfo holds the host ports in use on a node: ip → protocol/port.
type HostPortInfo map[string]map[ProtocolPort]struct{}

func sanitize(ip, protocol *string) {
	if *ip == "" {
		*ip = DefaultBindAllHostIP
	}
	if *protocol == "" {
		*protocol = "TCP"
	}
}

// Add records a used port.
func (h HostPortInfo) Add(ip, protocol string, port int32) {
	if port <= 0 {
		return
	}
	sanitize(&ip, &protocol)
	pp := NewProtocolPort(protocol, port)
	if _, ok := h[ip]; !ok {
		h[ip] = map[ProtocolPort]struct{}{pp: {}}
		return
	}
	h[ip][pp] = struct{}{}
}

// Remove frees a used port.
func (h HostPortInfo) Remove(ip, protocol string, port int32) {
	if port <= 0 {
		return
	}
	sanitize(&ip, &protocol)
	pp := NewProtocolPort(protocol, port)
	if m, ok := h[ip]; ok {
		delete(m, pp)
		if len(m) == 0 {
			delete(h, ip)
		}
	}
}

// Len counts used ports.
func (h HostPortInfo) Len() int {
	n := 0
	for _, m := range h {
		n += len(m)
	}
	return n
}

// CheckConflict reports whether ip/protocol/port conflicts with a used port;
// 0.0.0.0 conflicts with every IP.
func (h HostPortInfo) CheckConflict(ip, protocol string, port int32) bool {
	if port <= 0 {
		return false
	}
	sanitize(&ip, &protocol)
	pp := NewProtocolPort(protocol, port)
	if ip == DefaultBindAllHostIP {
		for _, m := range h {
			if _, ok := m[pp]; ok {
				return true
			}
		}
		return false
	}
	for _, key := range []string{DefaultBindAllHostIP, ip} {
		if m, ok := h[key]; ok {
			if _, ok2 := m[pp]; ok2 {
				return true
			}
		}
	}
	return false
}

// Clone copies the map.
func (h HostPortInfo) Clone() HostPortInfo {
	c := make(HostPortInfo, len(h))
	for ip, m := range h {
		mm := make(map[ProtocolPort]struct{}, len(m))
		for k := range m {
			mm[k] = struct{}{}
		}
		c[ip] = mm
	}
	return c
}

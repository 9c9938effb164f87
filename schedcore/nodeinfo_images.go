package schedcore

import (
	"hash/maphash"
	"unsafe"
)

// imageSeed seeds the hash of image names into NodeInfo's image filter:
// the filter lives as long as the process, so any seed will do.
var imageSeed = maphash.MakeSeed()

// ImageNameBits is the image name's bits in a NodeInfo's image filter
// (MayHoldImage): two of 64, from the name's hash.
func ImageNameBits(name string) uint64 {
	return nameBits(maphash.String(imageSeed, name))
}

// ImageNameBitsOf is ImageNameBits of a name held in a byte slice, without
// a string conversion.
func ImageNameBitsOf(name []byte) uint64 {
	return nameBits(maphash.Bytes(imageSeed, name))
}

func nameBits(h uint64) uint64 {
	return 1<<(h&63) | 1<<((h>>6)&63)
}

// setImageStates gives the node its image summaries and the filter of
// their names that MayHoldImage reads.
func (n *NodeInfo) setImageStates(m map[string]*ImageStateSummary) {
	n.ImageStates = m
	n.imageBits = 0
	for name := range m {
		n.imageBits |= ImageNameBits(name)
	}
	n.imageBitsOf = mapIdentity(m)
}

// MayHoldImage reports whether the name whose ImageNameBits are bits may
// be a key of the node's ImageStates: false means it is not (a lookup
// would find nothing), true that it may be. The filter is a Bloom filter
// of the names, made when the cache summarized the node's images: it
// spares a score loop the lookups in thousands of small maps (each a cache
// miss) on the nodes that hold none of a pod's images. A NodeInfo whose
// ImageStates were set otherwise (by hand, in a test) answers true.
func (n *NodeInfo) MayHoldImage(bits uint64) bool {
	if n.imageBitsOf == nil || n.imageBitsOf != mapIdentity(n.ImageStates) {
		return true
	}
	return n.imageBits&bits == bits
}

// mapIdentity is the map's identity: a map value is a pointer to the
// runtime's map, which stays the same for the map's life, so the filter is
// known to describe ImageStates only while ImageStates is the map it was
// made from.
func mapIdentity(m map[string]*ImageStateSummary) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&m))
}

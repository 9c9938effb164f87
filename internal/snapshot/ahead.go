package snapshot

// Adding a big List's items while its later items are still decoded: the
// items are decoded on every core, chunk after chunk in order, and the
// objects are added (which is done in turn, on one core) as soon as their
// chunk is decoded, so that adding no longer waits for the last item.
// At 100,000 nodes adding was two of the loading's fifteen CPU seconds,
// and it ran alone, after the decoding.
//
// What is added, and the error, are those of decoding every item first:
// the typed path leaves a List with an item that is not valid JSON to the
// map path, whose error (malformed JSON, at its line) does not depend on
// what was added before; so an item found invalid, or any error while
// adding when an item further on is invalid, gives that error.

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// aheadItems is the smallest List whose items are added while later ones
// are decoded (a variable for tests); smaller ones are decoded first
// (decodeItems), which costs no channels.
var aheadItems = 4096

// aheadChunk is how many items a core decodes at a time: adding waits
// for a chunk at most.
const aheadChunk = 256

// aheadDecoder decodes a List's items on every core, chunk by chunk.
type aheadDecoder struct {
	objs []typedObj
	// done[k] is closed when chunk k (items k*aheadChunk on) is decoded.
	done []chan struct{}
	next atomic.Int64
	stop atomic.Bool
	wg   sync.WaitGroup
}

// decodeAhead starts decoding items on every core and returns at once.
func decodeAhead(items [][]byte) *aheadDecoder {
	n := (len(items) + aheadChunk - 1) / aheadChunk
	a := &aheadDecoder{objs: make([]typedObj, len(items)), done: make([]chan struct{}, n)}
	for k := range a.done {
		a.done[k] = make(chan struct{})
	}
	for range min(runtime.GOMAXPROCS(0), n) {
		a.wg.Go(func() {
			for !a.stop.Load() {
				k := int(a.next.Add(1)) - 1
				if k >= n {
					return
				}
				for i := k * aheadChunk; i < min((k+1)*aheadChunk, len(items)); i++ {
					a.objs[i] = decodeTyped(items[i])
				}
				close(a.done[k])
			}
		})
	}
	return a
}

// get waits for item i to be decoded and returns it.
func (a *aheadDecoder) get(i int) typedObj {
	<-a.done[i/aheadChunk]
	return a.objs[i]
}

// firstInvalid waits for every item and returns the first that is not
// valid JSON, -1 if none.
func (a *aheadDecoder) firstInvalid() int {
	a.wg.Wait()
	for i, t := range a.objs {
		if !t.valid {
			return i
		}
	}
	return -1
}

// cancel stops decoding the chunks not yet begun: nothing will read them.
func (a *aheadDecoder) cancel() {
	if a != nil {
		a.stop.Store(true)
	}
}

// addAhead adds the items of p, which decodeAhead decodes, in order.
func (c *Cluster) addAhead(file string, d doc, p preparedDoc) error {
	a := p.ahead
	for i := range p.items {
		t := a.get(i)
		if !t.valid {
			a.cancel()
			return malformedList(file, d, p, i)
		}
		if err := c.addItem(file, d, p, i, t); err != nil {
			if j := a.firstInvalid(); j >= 0 {
				return malformedList(file, d, p, j)
			}
			return err
		}
	}
	return nil
}

// malformedList returns the map path's error for a List whose item i is
// not valid JSON (decodeDoc's, which does not read the cluster).
func malformedList(file string, d doc, p preparedDoc, i int) error {
	if _, err := decodeDoc(file, d, p.js); err != nil {
		return err
	}
	// Not reached: a List with an item that is not JSON is not JSON.
	return &LoadError{File: file, Line: d.line, Msg: fmt.Sprintf("items[%d]: malformed JSON", i)}
}

package schedcore

import "testing"

// TestVerdictWindow checks that a verdict entry, which holds its node's
// generation as a 24-bit offset from its table's base, is never taken for
// a node whose generation lies outside the view's window (it would share
// the offset's low bits), that values too large are not remembered, and
// that View moves a table's window along with the process's generations,
// keeping the entries the new window holds.
func TestVerdictWindow(t *testing.T) {
	m := NewVerdictMemo(4)
	k := new(MemoKey).String("k")
	v := m.View(k, 3)
	g := v.base + 5
	v.putAt(0, g, 7)
	if got, ok := v.getAt(0, g); !ok || got != 7 {
		t.Fatalf("GetAt(0, g) = %d, %v; want 7, true", got, ok)
	}
	for _, other := range []int64{g + 1<<32, g - 1<<32, g + verdictSpan, v.base, v.base - verdictSpan + 5} {
		if got, ok := v.getAt(0, other); ok {
			t.Errorf("GetAt(0, g%+d) = %d, true: another generation's entry", other-g, got)
		}
	}
	// A node whose generation is beyond the window is not remembered: its
	// offset's low bits would be another generation's.
	v.putAt(1, g+verdictSpan, 9)
	if got, ok := v.getAt(1, g); ok {
		t.Errorf("a generation beyond the window was stored over g's offset: GetAt(1, g) = %d", got)
	}
	v.putAt(1, g-verdictSpan, 9)
	if got, ok := v.getAt(1, g); ok {
		t.Errorf("a generation before the window was stored over g's offset: GetAt(1, g) = %d", got)
	}
	v.putAt(2, g, maxVerdictValue+1)
	if got, ok := v.getAt(2, g); ok {
		t.Errorf("a value above maxVerdictValue was remembered as %d", got)
	}
	v.putAt(2, g, maxVerdictValue)
	if got, ok := v.getAt(2, g); !ok || got != maxVerdictValue {
		t.Errorf("GetAt(2, g) = %d, %v; want %d, true", got, ok, maxVerdictValue)
	}

	// The process's generations move on by more than the headroom: View
	// moves the window, keeping the entries it still holds.
	generation.Add(v.base + verdictSpan/2 - generation.Load())
	recent := nextGeneration()
	v.putAt(1, recent, 3)
	generation.Add(verdictSpan / 4)
	w := m.View(k, 3)
	if w.base == v.base {
		t.Fatalf("the window did not move (base %d) at generation %d", w.base, generation.Load())
	}
	if got, ok := w.getAt(1, recent); !ok || got != 3 {
		t.Errorf("after the move, GetAt(1, recent) = %d, %v; want 3, true", got, ok)
	}
	if recent-w.base <= 0 {
		t.Fatalf("the new window (base %d) does not hold generation %d", w.base, recent)
	}
	if got, ok := w.getAt(0, g); ok && g <= w.base {
		t.Errorf("after the move, a generation before the window hit: %d", got)
	}
	// The old view keeps its own entries and base.
	if got, ok := v.getAt(0, g); !ok || got != 7 {
		t.Errorf("the old view lost its entry: GetAt(0, g) = %d, %v", got, ok)
	}
	// A new generation in the new window is remembered.
	cur := nextGeneration()
	w.putAt(2, cur, 4)
	if got, ok := w.getAt(2, cur); !ok || got != 4 {
		t.Errorf("GetAt(2, cur) = %d, %v; want 4, true", got, ok)
	}
}

// TestNodeMemoWindow checks that a NodeMemo entry, which holds its node's
// generation as a 32-bit offset from its table's base, is never taken for
// a node whose generation lies outside the table's window, and that
// acquire moves the window along with the process's generations, keeping
// the entries the new window holds.
func TestNodeMemoWindow(t *testing.T) {
	m := NewNodeMemo[int32](2)
	k := new(MemoKey).String("k")
	tb := m.acquire(k, 3)
	g := tb.base + 5
	node := func(pos int, gen int64) *NodeInfo { return &NodeInfo{listPos: pos + 1, Generation: gen} }
	tb.put(node(0, g), 7)
	if v, ok := tb.getAt(0, g); !ok || v != 7 {
		t.Fatalf("getAt(0, g) = %d, %v; want 7, true", v, ok)
	}
	for _, other := range []int64{g + memoSpan, g - memoSpan} {
		if v, ok := tb.get(node(0, other)); ok {
			t.Errorf("get(generation g%+d) = %d, true: another generation's entry", other-g, v)
		}
	}
	tb.put(node(1, g+memoSpan), 9)
	if v, ok := tb.getAt(1, g); ok {
		t.Errorf("a generation beyond the window was stored over g's offset: getAt(1, g) = %d", v)
	}
	tb.put(node(1, g-memoSpan), 9)
	if v, ok := tb.getAt(1, g); ok {
		t.Errorf("a generation before the window was stored over g's offset: getAt(1, g) = %d", v)
	}
	generation.Add(tb.base + memoSpan/2 - generation.Load())
	recent := nextGeneration()
	tb.put(node(1, recent), 3)
	tb.release()
	generation.Add(memoSpan / 4)
	base := tb.base
	tb = m.acquire(k, 3)
	defer tb.release()
	if tb.base == base {
		t.Fatalf("the window did not move (base %d) at generation %d", tb.base, generation.Load())
	}
	if v, ok := tb.getAt(1, recent); !ok || v != 3 {
		t.Errorf("after the move, getAt(1, recent) = %d, %v; want 3, true", v, ok)
	}
	if v, ok := tb.getAt(0, g); ok {
		t.Errorf("after the move, a generation before the window hit: %d", v)
	}
	cur := nextGeneration()
	tb.put(node(2, cur), 4)
	if v, ok := tb.getAt(2, cur); !ok || v != 4 {
		t.Errorf("getAt(2, cur) = %d, %v; want 4, true", v, ok)
	}
}

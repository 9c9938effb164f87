package helper

import (
	"strconv"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// BoundSelector is a label selector bound to a snapshot's label columns
// (schedcore.LabelView): a requirement's values become ids once, when it
// is bound, and a listed node's value is an id read from the column, so
// matching a node takes no label-map lookup. It answers as
// labels.Selector.Matches on the node's labels; for a node the columns
// were not read from, Match says so and the caller matches the labels.
// Bind it once per cycle: it is read-only after.
type BoundSelector struct {
	reqs []boundRequirement
}

// boundRequirement is one labels.Requirement with its column.
type boundRequirement struct {
	view schedcore.LabelView
	op   selection.Operator
	// ids are the ids of the values (In, NotIn and their equality forms)
	// that some node of the column had: a value no node has matches no
	// node's id.
	ids []int32
	// bound is the Gt or Lt operand, boundOK false when the requirement
	// does not hold exactly one integer (then it matches nothing).
	bound   int64
	boundOK bool
}

// BindSelector binds sel's requirements to snap's label columns; ok is
// false when sel is not a list of requirements (labels.Nothing()).
func BindSelector(sel labels.Selector, snap *schedcore.Snapshot) (BoundSelector, bool) {
	reqs, selectable := sel.Requirements()
	if !selectable {
		return BoundSelector{}, false
	}
	b := BoundSelector{reqs: make([]boundRequirement, len(reqs))}
	for i := range reqs {
		r := &reqs[i]
		br := boundRequirement{view: snap.LabelView(r.Key()), op: r.Operator()}
		switch br.op {
		case selection.In, selection.Equals, selection.DoubleEquals, selection.NotIn, selection.NotEquals:
			for _, v := range r.ValuesUnsorted() {
				if id, ok := br.view.IDOf(v); ok {
					br.ids = append(br.ids, id)
				}
			}
		case selection.GreaterThan, selection.LessThan:
			if vs := r.ValuesUnsorted(); len(vs) == 1 {
				n, err := strconv.ParseInt(vs[0], 10, 64)
				br.bound, br.boundOK = n, err == nil
			}
		case selection.Exists, selection.DoesNotExist:
		default:
			return BoundSelector{}, false // matches nothing; leave it to the selector
		}
		b.reqs[i] = br
	}
	return b, true
}

// Match reports whether ni's labels match every requirement; ok is false
// when a column was not read from ni's node object.
func (b *BoundSelector) Match(ni *schedcore.NodeInfo) (matched, ok bool) {
	for i := range b.reqs {
		r := &b.reqs[i]
		id, ok := r.view.ID(ni)
		if !ok {
			return false, false
		}
		if !r.matches(id) {
			return false, true
		}
	}
	return true, true
}

// matches is labels.Requirement.Matches for a node whose value has id
// (-1: the node lacks the label).
func (r *boundRequirement) matches(id int32) bool {
	switch r.op {
	case selection.In, selection.Equals, selection.DoubleEquals:
		return id >= 0 && hasID(r.ids, id)
	case selection.NotIn, selection.NotEquals:
		return id < 0 || !hasID(r.ids, id)
	case selection.Exists:
		return id >= 0
	case selection.DoesNotExist:
		return id < 0
	case selection.GreaterThan, selection.LessThan:
		if id < 0 || !r.boundOK {
			return false
		}
		n, err := strconv.ParseInt(r.view.ValueOf(id), 10, 64)
		if err != nil {
			return false
		}
		return r.op == selection.GreaterThan && n > r.bound || r.op == selection.LessThan && n < r.bound
	}
	return false
}

func hasID(ids []int32, id int32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// boundAffinity is a RequiredNodeAffinity's selectors bound to columns.
type boundAffinity struct {
	selector    BoundSelector
	hasSelector bool
	terms       []BoundSelector
}

// Bind binds the nodeSelector and required terms to snap's label columns
// for MatchNodeInfo; nothing is bound when they are matched by
// component-helpers (matchFields) or snap has no nodes. Call it once per
// cycle, before the filters run in parallel.
func (r *RequiredNodeAffinity) Bind(snap *schedcore.Snapshot) {
	r.bound = nil
	if r.fallback != nil || r.selector == nil && !r.hasRequired || snap == nil || snap.NumNodes() == 0 {
		return // component-helpers matches, or every node matches
	}
	b := &boundAffinity{}
	if r.selector != nil {
		sel, ok := BindSelector(r.selector, snap)
		if !ok {
			return
		}
		b.selector, b.hasSelector = sel, true
	}
	if r.hasRequired {
		b.terms = make([]BoundSelector, len(r.terms))
		for i, t := range r.terms {
			sel, ok := BindSelector(t, snap)
			if !ok {
				return
			}
			b.terms[i] = sel
		}
	}
	r.bound = b
}

// MatchNodeInfo is Match(ni.Node()), reading the labels from the columns
// Bind bound when they were read from ni's node object.
func (r *RequiredNodeAffinity) MatchNodeInfo(ni *schedcore.NodeInfo) (bool, error) {
	if b := r.bound; b != nil {
		if m, ok := b.match(ni, r.hasRequired); ok {
			return m, nil
		}
	}
	return r.Match(ni.Node())
}

func (b *boundAffinity) match(ni *schedcore.NodeInfo, hasRequired bool) (matched, ok bool) {
	if b.hasSelector {
		if m, ok := b.selector.Match(ni); !ok || !m {
			return false, ok
		}
	}
	if !hasRequired {
		return true, true
	}
	for i := range b.terms {
		m, ok := b.terms[i].Match(ni)
		if !ok {
			return false, false
		}
		if m {
			return true, true
		}
	}
	return false, true
}

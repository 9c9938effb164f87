package schedcore

// ListIndex is ni's position in its snapshot's list, for tests that check
// the list's bookkeeping.
func ListIndex(ni *NodeInfo) int { return ni.listIndex() }

// Values are the slots' values by list position.
func (n *NodeSlots[S]) Values() []S { return n.vals }

// ChangeLogSize is how many replaced positions a snapshot's change log
// holds.
const ChangeLogSize = changeLogSize

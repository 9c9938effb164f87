package schedcore

// Framework runs one profile's plugins at each extension point.
type Framework struct {
	profileName string
	handle      *Handle
}

// ProfileName returns the profile's schedulerName.
func (f *Framework) ProfileName() string { return f.profileName }

// Handle returns the handle given to the profile's plugins.
func (f *Framework) Handle() *Handle { return f.handle }

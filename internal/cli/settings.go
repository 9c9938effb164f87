package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	yaml "go.yaml.in/yaml/v3"
)

// The user's settings: what they would otherwise type every time, as the
// verbs' long flags, in a YAML file and in KUBECTL_SCHED_* variables.
//
//	output: wide            # global: every verb where --output means what it means in most
//	dryrun:
//	  output: json          # per verb: beats the global key
//	top:
//	  metrics-url: http://127.0.0.1:10259/metrics
//
// A flag given on the command line wins; then the environment
// (KUBECTL_SCHED_DRYRUN_OUTPUT, then KUBECTL_SCHED_OUTPUT); then the file
// (dryrun.output, then output); then the built-in default. Settings are
// applied to the flags of the verb about to run, before its Complete, as if
// typed; library code never sees viper.

// EnvPrefix starts every environment variable kubectl-sched reads.
const EnvPrefix = "KUBECTL_SCHED"

// EnvSettings names the settings file instead of the default path.
const EnvSettings = EnvPrefix + "_SETTINGS"

// settingsFlag is the root's persistent flag naming the settings file.
const settingsFlag = "settings"

// notSettable are flags no setting may set.
var notSettable = map[string]bool{"help": true, settingsFlag: true}

// notVerbs are commands whose flags are not settings.
var notVerbs = map[string]bool{"completion": true, "help": true, "settings": true, cobra.ShellCompRequestCmd: true, cobra.ShellCompNoDescRequestCmd: true}

// DefaultSettingsPath is $XDG_CONFIG_HOME/kubectl-sched/config.yaml, else
// ~/.config/kubectl-sched/config.yaml ("" when neither can be known).
func DefaultSettingsPath() string {
	if d := os.Getenv("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "kubectl-sched", "config.yaml")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".config", "kubectl-sched", "config.yaml")
}

// settingSource says where a setting came from.
type settingSource struct {
	// Env is the variable's name; else File and Line.
	Env  string
	File string
	Line int
}

func (s settingSource) String() string {
	if s.Env != "" {
		return s.Env
	}
	return fmt.Sprintf("%s:%d", s.File, s.Line)
}

// setting is one value of a key, from one place.
type setting struct {
	Key    string
	Values []string // one, but for a list given to a list flag
	List   bool
	Source settingSource
}

func (s setting) String() string {
	if s.List {
		return "[" + strings.Join(s.Values, ",") + "]"
	}
	return s.Values[0]
}

// userSettings are the settings read from the file and the environment.
type userSettings struct {
	// Path is the file; Exists whether there is one.
	Path   string
	Exists bool
	keys   *settingKeys
	// file and env hold the values by key.
	file, env map[string]setting
}

// loadSettings reads the settings file (path, or KUBECTL_SCHED_SETTINGS, or
// the default path; a missing file at the default path is no settings)
// and the environment, and checks every key of the file against the
// command tree. Errors are bad input: one line naming the file, the line
// and the key.
func loadSettings(root *cobra.Command, path string) (*userSettings, error) {
	path, explicit := settingsPath(path)
	s := &userSettings{Path: path, keys: keysOf(root), file: map[string]setting{}, env: map[string]setting{}}
	if path != "" {
		data, err := readSettingsFile(path)
		switch {
		case errors.Is(err, os.ErrNotExist) && !explicit:
		case err != nil:
			return nil, UsageErrorf("settings: %w", err)
		default:
			s.Exists = true
			if err := s.readFile(data); err != nil {
				return nil, err
			}
		}
	}
	s.readEnv()
	return s, nil
}

// settingsPath is the settings file: --settings, else
// KUBECTL_SCHED_SETTINGS (both explicit), else the default path.
func settingsPath(flag string) (path string, explicit bool) {
	if flag != "" {
		return flag, true
	}
	if env := os.Getenv(EnvSettings); env != "" {
		return env, true
	}
	return DefaultSettingsPath(), false
}

// maxSettingsSize bounds what is read of a settings file (a device such as
// /dev/zero never ends).
const maxSettingsSize = 1 << 20

func readSettingsFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSettingsSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxSettingsSize {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxSettingsSize)
	}
	return data, nil
}

// readFile parses the file: its lines with yaml, its values with viper.
func (s *userSettings) readFile(data []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return UsageErrorf("settings %s", yamlError(s.Path, err))
	}
	if len(doc.Content) == 0 {
		return nil // empty
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return UsageErrorf("settings %s:%d: want a mapping of keys to values", s.Path, top.Line)
	}
	v := viper.New()
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
		return UsageErrorf("settings %s: %v", s.Path, err)
	}
	add := func(key string, keyNode, n *yaml.Node) error {
		at := func(format string, a ...any) error {
			return UsageErrorf("settings %s:%d: %s", s.Path, keyNode.Line, fmt.Sprintf(format, a...))
		}
		if err := s.keys.check(key); err != nil {
			return at("%v", err)
		}
		st := setting{Key: key, Source: settingSource{File: s.Path, Line: keyNode.Line}}
		switch n.Kind {
		case yaml.ScalarNode:
			st.Values = []string{v.GetString(key)}
		case yaml.SequenceNode:
			for _, f := range s.keys.flagsOf(key) {
				if _, ok := f.Value.(pflag.SliceValue); !ok {
					return at("%s: --%s takes one value, not a list", key, f.Name)
				}
			}
			st.Values, st.List = v.GetStringSlice(key), true
		default:
			return at("%s: want a value, not a mapping", key)
		}
		for _, f := range s.keys.flagsOf(key) {
			if err := checkValue(f, st); err != nil {
				return at("%s: %v", key, err)
			}
		}
		s.file[key] = st
		return nil
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, val := top.Content[i], top.Content[i+1]
		if _, isVerb := s.keys.verbs[k.Value]; isVerb && val.Kind == yaml.MappingNode {
			for j := 0; j+1 < len(val.Content); j += 2 {
				if strings.Contains(val.Content[j].Value, ".") {
					return UsageErrorf("settings %s:%d: unknown key %q", s.Path, val.Content[j].Line, k.Value+"."+val.Content[j].Value)
				}
				if err := add(k.Value+"."+val.Content[j].Value, val.Content[j], val.Content[j+1]); err != nil {
					return err
				}
			}
			continue
		}
		if strings.Contains(k.Value, ".") {
			return UsageErrorf("settings %s:%d: unknown key %q: nest per-verb keys (verb:\\n  flag: value)", s.Path, k.Line, k.Value)
		}
		if err := add(k.Value, k, val); err != nil {
			return err
		}
	}
	return nil
}

// readEnv reads KUBECTL_SCHED_<KEY> for every key, with viper.
func (s *userSettings) readEnv() {
	v := viper.New()
	v.SetEnvPrefix(EnvPrefix)
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_", "-", "_"))
	v.AutomaticEnv()
	look := func(key string) {
		if val, ok := os.LookupEnv(envName(key)); ok && val != "" {
			s.env[key] = setting{Key: key, Values: []string{v.GetString(key)}, Source: settingSource{Env: envName(key)}}
		}
	}
	for verb, flags := range s.keys.verbs {
		for name := range flags {
			look(verb + "." + name)
		}
	}
	for name := range s.keys.global {
		look(name)
	}
}

// lookup returns the setting of a verb's flag, in precedence order:
// environment per verb, then global; file per verb, then global.
func (s *userSettings) lookup(verb, flag string) (setting, bool) {
	perVerb := verb + "." + flag
	global := s.appliesGlobally(verb, flag)
	for _, m := range []map[string]setting{s.env, s.file} {
		if st, ok := m[perVerb]; ok {
			return st, true
		}
		if st, ok := m[flag]; ok && global {
			return st, true
		}
	}
	return setting{}, false
}

func (s *userSettings) appliesGlobally(verb, flag string) bool {
	for _, v := range s.keys.global[flag] {
		if v == verb {
			return true
		}
	}
	return false
}

// verbOf is the top-level verb cmd belongs to ("" for the root).
func verbOf(cmd *cobra.Command) string {
	for c := cmd; c != nil; c = c.Parent() {
		if c.HasParent() && !c.Parent().HasParent() {
			return c.Name()
		}
	}
	return ""
}

// apply sets each flag of cmd's verb that was not given on the command
// line from its setting, as if typed.
func (s *userSettings) apply(cmd *cobra.Command) error {
	verb := verbOf(cmd)
	if _, ok := s.keys.verbs[verb]; !ok || cmd.Parent() == nil || cmd.Parent().HasParent() {
		return nil
	}
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed || notSettable[f.Name] {
			return
		}
		st, ok := s.lookup(verb, f.Name)
		if !ok {
			return
		}
		st = relativeToFile(f, st)
		if e := setFlag(cmd.Flags(), f, st); e != nil {
			err = UsageErrorf("settings %s: %s: %v", st.Source, st.Key, e)
		}
	})
	return err
}

// relativeToFile resolves a relative path that the settings file gives to
// a flag naming files (one marked for filename completion, or
// --kubeconfig) against the file's directory, as kubectl resolves the
// paths in a kubeconfig against the kubeconfig's: the same file then means
// the same files from any working directory. A value from the environment
// is as typed, relative to the working directory; "-" (standard input)
// stays.
func relativeToFile(f *pflag.Flag, st setting) setting {
	if st.Source.File == "" || st.Source.Env != "" {
		return st
	}
	if _, ok := f.Annotations[cobra.BashCompFilenameExt]; !ok && f.Name != "kubeconfig" {
		return st
	}
	dir := filepath.Dir(st.Source.File)
	values := make([]string, len(st.Values))
	for i, v := range st.Values {
		if v != "" && v != "-" && !filepath.IsAbs(v) && !strings.HasPrefix(v, "~") {
			v = filepath.Join(dir, v)
		}
		values[i] = v
	}
	st.Values = values
	return st
}

// setFlag sets f from a setting and marks it given.
func setFlag(fs *pflag.FlagSet, f *pflag.Flag, st setting) error {
	if st.List {
		sv, ok := f.Value.(pflag.SliceValue)
		if !ok {
			return fmt.Errorf("--%s takes one value, not a list", f.Name)
		}
		if err := sv.Replace(st.Values); err != nil {
			return err
		}
		f.Changed = true
		return nil
	}
	return fs.Set(f.Name, st.Values[0])
}

// checkValue reports whether the setting is a value f accepts, on a copy
// of f's value made through a fresh flag set.
func checkValue(f *pflag.Flag, st setting) error {
	fs := pflag.NewFlagSet("check", pflag.ContinueOnError)
	fresh, ok := freshValue(f)
	if !ok {
		return nil // a type of our own: checked when applied
	}
	fs.Var(fresh, f.Name, "")
	return setFlag(fs, fs.Lookup(f.Name), st)
}

// freshValue returns a new value of f's type, for the types pflag makes.
func freshValue(f *pflag.Flag) (pflag.Value, bool) {
	fs := pflag.NewFlagSet("fresh", pflag.ContinueOnError)
	switch f.Value.Type() {
	case "string":
		fs.String("x", "", "")
	case "bool":
		fs.Bool("x", false, "")
	case "int":
		fs.Int("x", 0, "")
	case "int32":
		fs.Int32("x", 0, "")
	case "int64":
		fs.Int64("x", 0, "")
	case "float64":
		fs.Float64("x", 0, "")
	case "duration":
		fs.Duration("x", 0, "")
	case "stringArray":
		fs.StringArray("x", nil, "")
	case "stringSlice":
		fs.StringSlice("x", nil, "")
	case "intSlice":
		fs.IntSlice("x", nil, "")
	default:
		return nil, false
	}
	return fs.Lookup("x").Value, true
}

// annotateHelp shows, in cmd's --help, the defaults that come from the
// settings: the value as the default, and where it was set.
func (s *userSettings) annotateHelp(cmd *cobra.Command) {
	verb := verbOf(cmd)
	if _, ok := s.keys.verbs[verb]; !ok {
		return
	}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if notSettable[f.Name] {
			return
		}
		st, ok := s.lookup(verb, f.Name)
		if !ok || strings.Contains(f.Usage, "(set in ") {
			return
		}
		f.DefValue = st.String()
		f.Usage += " (set in " + st.Source.String() + ")"
	})
}

var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): `)

// yamlError words a YAML error as "FILE:LINE: what".
func yamlError(path string, err error) string {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		return path + ":" + m[1] + ": " + msg[len(m[0]):]
	}
	return path + ": " + strings.TrimPrefix(msg, "yaml: ")
}

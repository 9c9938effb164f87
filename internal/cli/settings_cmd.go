package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	yaml "go.yaml.in/yaml/v3"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	sigyaml "sigs.k8s.io/yaml"
)

// NewCmdSettings builds `kubectl sched settings` with view and set.
func NewCmdSettings(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "settings",
		Short: "View or change your settings (the defaults of every verb's flags)",
		Long: strings.TrimSpace(`
Your settings are the flags you would otherwise type every time, kept in
$XDG_CONFIG_HOME/kubectl-sched/config.yaml (else
~/.config/kubectl-sched/config.yaml; --settings FILE or
KUBECTL_SCHED_SETTINGS name another) and in KUBECTL_SCHED_* variables.
Keys are the verbs' long flags, globally (output: wide) or per verb
(dryrun: {output: json}); the variables are KUBECTL_SCHED_OUTPUT and
KUBECTL_SCHED_DRYRUN_OUTPUT. A flag on the command line wins, then the
environment, then the file, then the built-in default; a per-verb key beats
a global one. A global key sets the flag in the verbs where it means what
it means in most of them (settings view says which).`),
		Example: `  # What is set, and where
  kubectl sched settings view

  # Always the wide table, and a dry run's as JSON
  kubectl sched settings set output wide
  kubectl sched settings set dryrun.output json

  # The metrics top watches
  kubectl sched settings set top.metrics-url http://127.0.0.1:10259/metrics`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
	cmd.AddCommand(newCmdSettingsView(streams), newCmdSettingsSet(streams))
	return cmd
}

// SettingsViewOptions are the settings of `kubectl sched settings view`.
type SettingsViewOptions struct {
	genericiooptions.IOStreams
	Output string
	root   *cobra.Command
	path   string
}

func newCmdSettingsView(streams genericiooptions.IOStreams) *cobra.Command {
	o := &SettingsViewOptions{IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "view",
		Short: "Print the settings in effect and where each comes from",
		Example: `  # The settings in effect
  kubectl sched settings view

  # As YAML
  kubectl sched settings view -o yaml`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.root, o.path = cmd.Root(), settingsPathFlag(cmd)
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run()
		},
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "table", "Output format: table, json or yaml")
	_ = cmd.RegisterFlagCompletionFunc("output", fixedCompletion("table", "json", "yaml"))
	return cmd
}

// Validate checks the output format.
func (o *SettingsViewOptions) Validate() error {
	switch o.Output {
	case "table", "json", "yaml":
		return nil
	}
	return UsageErrorf("--output: unsupported %q (table, json or yaml)", o.Output)
}

// settingView is one row of settings view.
type settingView struct {
	Key       string   `json:"key"`
	Value     any      `json:"value"`
	Source    string   `json:"source"`
	AppliesTo []string `json:"appliesTo"`
	// Overrides lists the sources of the same key it wins over.
	Overrides []string `json:"overrides,omitempty"`
}

// settingsDoc is settings view's machine output.
type settingsDoc struct {
	File       string        `json:"file"`
	FileExists bool          `json:"fileExists"`
	Settings   []settingView `json:"settings"`
}

// Run prints the settings.
func (o *SettingsViewOptions) Run() error {
	s, err := loadSettings(o.root, o.path)
	if err != nil {
		return err
	}
	doc := settingsDoc{File: s.Path, FileExists: s.Exists, Settings: []settingView{}}
	keys := map[string]bool{}
	for k := range s.file {
		keys[k] = true
	}
	for k := range s.env {
		keys[k] = true
	}
	var sorted []string
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		st, over := s.env[k], []string{}
		if f, ok := s.file[k]; ok {
			if _, inEnv := s.env[k]; inEnv {
				over = append(over, f.Source.String())
			} else {
				st = f
			}
		}
		row := settingView{Key: k, Value: st.String(), Source: st.Source.String(), Overrides: over}
		if st.List {
			row.Value = st.Values
		}
		if verb, _, ok := strings.Cut(k, "."); ok {
			row.AppliesTo = []string{verb}
		} else {
			row.AppliesTo = s.keys.global[k]
		}
		doc.Settings = append(doc.Settings, row)
	}
	switch o.Output {
	case "json":
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(o.Out, "%s\n", b)
		return err
	case "yaml":
		b, err := sigyaml.Marshal(doc)
		if err != nil {
			return err
		}
		_, err = o.Out.Write(b)
		return err
	}
	return printSettings(o.Out, doc)
}

func printSettings(out io.Writer, doc settingsDoc) error {
	state := ""
	if !doc.FileExists {
		state = " (none yet)"
	}
	fmt.Fprintf(out, "Settings file: %s%s\n", doc.File, state)
	if len(doc.Settings) == 0 {
		_, err := fmt.Fprintln(out, "No settings: every flag has its built-in default.")
		return err
	}
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "KEY\tVALUE\tFROM\tAPPLIES TO")
	for _, r := range doc.Settings {
		from := r.Source
		if len(r.Overrides) > 0 {
			from += " (over " + strings.Join(r.Overrides, ", ") + ")"
		}
		v := fmt.Sprint(r.Value)
		if l, ok := r.Value.([]string); ok {
			v = "[" + strings.Join(l, ",") + "]"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", r.Key, v, from, strings.Join(r.AppliesTo, ","))
	}
	return w.Flush()
}

// SettingsSetOptions are the settings of `kubectl sched settings set`.
type SettingsSetOptions struct {
	genericiooptions.IOStreams
	Key    string
	Values []string
	root   *cobra.Command
	path   string
}

func newCmdSettingsSet(streams genericiooptions.IOStreams) *cobra.Command {
	o := &SettingsSetOptions{IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "set KEY VALUE [VALUE...]",
		Short: "Set a key in the settings file (several values for a list flag)",
		Long: strings.TrimSpace(`
Set KEY (a long flag, globally, or VERB.FLAG) to VALUE in the settings file,
keeping its other keys and comments. The file is replaced atomically (a new
file renamed over it); a symbolic link is followed and its target replaced;
anything but a regular file is refused.`),
		Example: `  # The wide table wherever -o offers it ('settings view' lists the verbs)
  kubectl sched settings set output wide

  # Two snapshots for every dry run
  kubectl sched settings set dryrun.filename a.yaml b.yaml`,
		Args: cobra.MinimumNArgs(2),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveDefault
			}
			var keys []string
			for _, k := range settingKeyNames(keysOf(cmd.Root())) {
				if strings.HasPrefix(k, toComplete) {
					keys = append(keys, k)
				}
			}
			return keys, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.root, o.path = cmd.Root(), settingsPathFlag(cmd)
			o.Key, o.Values = args[0], args[1:]
			return o.Run()
		},
	}
	return cmd
}

// settingKeyNames lists every key, for completion.
func settingKeyNames(k *settingKeys) []string {
	var names []string
	for name := range k.global {
		names = append(names, name)
	}
	for verb, flags := range k.verbs {
		for name := range flags {
			names = append(names, verb+"."+name)
		}
	}
	sort.Strings(names)
	return names
}

// Run checks the key and value against the command tree, then writes.
func (o *SettingsSetOptions) Run() error {
	path, _ := settingsPath(o.path)
	keys := keysOf(o.root)
	if err := keys.check(o.Key); err != nil {
		return UsageErrorf("settings set: %v", err)
	}
	st := setting{Key: o.Key, Values: o.Values, List: len(o.Values) > 1}
	for _, f := range keys.flagsOf(o.Key) {
		if _, ok := f.Value.(pflag.SliceValue); ok {
			st.List = true
		}
		if err := checkValue(f, st); err != nil {
			return UsageErrorf("settings set: %s: %v", o.Key, err)
		}
	}
	if path == "" {
		return UsageErrorf("settings set: no settings file: set XDG_CONFIG_HOME or HOME, or give --settings FILE")
	}
	return writeSetting(path, st)
}

// writeSetting sets one key in the file at path and replaces it
// atomically: a new file in the same directory, synced, renamed over the
// target (a symbolic link's target). A path that is not a regular file is
// refused (bad input).
func writeSetting(path string, st setting) error {
	target, err := filepath.EvalSymlinks(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// A dangling link's target, or a new file.
		target = path
		if l, lerr := os.Readlink(path); lerr == nil {
			target = l
			if !filepath.IsAbs(l) {
				target = filepath.Join(filepath.Dir(path), l)
			}
		}
	case err != nil:
		return fmt.Errorf("settings %s: %w", path, err)
	}
	mode := fs.FileMode(0o600)
	var doc yaml.Node
	if fi, err := os.Stat(target); err == nil {
		if !fi.Mode().IsRegular() {
			return UsageErrorf("settings %s: not a regular file (%s): refusing to replace it", path, fi.Mode().Type())
		}
		mode = fi.Mode().Perm()
		data, err := readSettingsFile(target)
		if err != nil {
			return fmt.Errorf("settings %s: %w", path, err)
		}
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return UsageErrorf("settings %s", yamlError(path, err))
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("settings %s: %w", path, err)
	}
	if err := setNode(&doc, st); err != nil {
		return UsageErrorf("settings %s: %v", path, err)
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return fmt.Errorf("settings %s: %w", path, err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("settings %s: %w", path, err)
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("settings %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(target)+".*")
	if err != nil {
		return fmt.Errorf("settings %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing
	if _, err := tmp.Write(out.Bytes()); err != nil {
		tmp.Close()
		return fmt.Errorf("settings %s: writing: %w", path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("settings %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("settings %s: writing: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("settings %s: writing: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return fmt.Errorf("settings %s: %w", path, err)
	}
	return nil
}

// setNode sets the key in a YAML document, keeping the rest (comments
// too): "verb.flag" under the verb's mapping.
func setNode(doc *yaml.Node, st setting) error {
	if doc.Kind == 0 {
		doc.Kind = yaml.DocumentNode
	}
	if len(doc.Content) == 0 {
		doc.Content = []*yaml.Node{{Kind: yaml.MappingNode}}
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: want a mapping of keys to values", m.Line)
	}
	path := strings.Split(st.Key, ".")
	for _, p := range path[:len(path)-1] {
		child := lookupNode(m, p)
		if child == nil {
			child = &yaml.Node{Kind: yaml.MappingNode}
			m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: p}, child)
		}
		if child.Kind != yaml.MappingNode {
			return fmt.Errorf("line %d: %s is not a mapping", child.Line, p)
		}
		m = child
	}
	val := &yaml.Node{Kind: yaml.ScalarNode, Value: st.Values[0]}
	if st.List {
		val = &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, v := range st.Values {
			val.Content = append(val.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: v})
		}
	}
	last := path[len(path)-1]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == last {
			val.HeadComment, val.LineComment = m.Content[i+1].HeadComment, m.Content[i+1].LineComment
			m.Content[i+1] = val
			return nil
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: last}, val)
	return nil
}

func lookupNode(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// settingsPathFlag is --settings as given ("" when not).
func settingsPathFlag(cmd *cobra.Command) string {
	if f := cmd.Root().PersistentFlags().Lookup(settingsFlag); f != nil {
		return f.Value.String()
	}
	return ""
}

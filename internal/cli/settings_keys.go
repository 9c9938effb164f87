package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The settings' key space: which flags of which verbs a key of the
// settings file or a KUBECTL_SCHED_ variable sets (settings.go reads and
// applies them).

// settingKeys is the key space: the verbs' flags, and for each global key
// the verbs it applies to.
type settingKeys struct {
	// verbs maps a verb to its settable flags.
	verbs map[string]map[string]*pflag.Flag
	// global maps a flag name to the verbs a global key sets it in: those
	// where the flag means what it means in most (the same type and help
	// text); none when no meaning has a strict majority (--seed, -f).
	global map[string][]string
	// meanings maps a flag name to its verbs, for the error of a global
	// key that applies nowhere.
	meanings map[string][]string
	// aliases maps "verb.flag" of a flag's other name to the flag's name.
	aliases map[string]string
}

// keysOf builds the key space of a command tree.
func keysOf(root *cobra.Command) *settingKeys {
	k := &settingKeys{verbs: map[string]map[string]*pflag.Flag{}, global: map[string][]string{}, meanings: map[string][]string{}, aliases: map[string]string{}}
	groups := map[string]map[string][]string{} // flag → meaning → verbs
	for _, c := range root.Commands() {
		if notVerbs[c.Name()] {
			continue
		}
		flags := map[string]*pflag.Flag{}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if notSettable[f.Name] || f.Hidden {
				return
			}
			if to := f.Annotations[aliasAnnotation]; len(to) > 0 {
				k.aliases[c.Name()+"."+f.Name] = to[0] // set by its flag's key
				return
			}
			flags[f.Name] = f
			if groups[f.Name] == nil {
				groups[f.Name] = map[string][]string{}
			}
			meaning := f.Value.Type() + "\x00" + f.Usage
			groups[f.Name][meaning] = append(groups[f.Name][meaning], c.Name())
			k.meanings[f.Name] = append(k.meanings[f.Name], c.Name())
		})
		k.verbs[c.Name()] = flags
	}
	for name, byMeaning := range groups {
		var best []string
		tie := false
		for _, verbs := range byMeaning {
			switch {
			case len(verbs) > len(best):
				best, tie = verbs, false
			case len(verbs) == len(best):
				tie = true
			}
		}
		if !tie && (len(byMeaning) == 1 || len(best) > 1) {
			sort.Strings(best)
			k.global[name] = best
		}
	}
	return k
}

// check reports whether key names a setting: "verb.flag", or "flag" set
// globally. The error says why not.
func (k *settingKeys) check(key string) error {
	verb, flag, perVerb := strings.Cut(key, ".")
	if perVerb {
		flags, ok := k.verbs[verb]
		if !ok {
			return fmt.Errorf("unknown key %q: no verb %q", key, verb)
		}
		if _, ok := flags[flag]; !ok {
			if to, ok := k.aliases[key]; ok {
				return fmt.Errorf("key %q: --%s is --%s's other name: set %s.%s", key, flag, to, verb, to)
			}
			return fmt.Errorf("unknown key %q: %s has no --%s flag", key, verb, flag)
		}
		return nil
	}
	if _, ok := k.verbs[key]; ok {
		return fmt.Errorf("key %q is a verb: give its flags under it (%s.FLAG)", key, key)
	}
	if _, ok := k.global[key]; ok {
		return nil
	}
	if verbs, ok := k.meanings[key]; ok {
		sort.Strings(verbs)
		return fmt.Errorf("key %q: --%s means something different to each verb (%s): set it per verb, as %s.%s", key, key, strings.Join(verbs, ", "), verbs[0], key)
	}
	return fmt.Errorf("unknown key %q: no verb has a --%s flag", key, key)
}

// flagsOf returns the flags a key sets.
func (k *settingKeys) flagsOf(key string) []*pflag.Flag {
	if verb, flag, ok := strings.Cut(key, "."); ok {
		return []*pflag.Flag{k.verbs[verb][flag]}
	}
	var fs []*pflag.Flag
	for _, v := range k.global[key] {
		fs = append(fs, k.verbs[v][key])
	}
	return fs
}

// envName is the variable of a key: KUBECTL_SCHED_DRYRUN_OUTPUT.
func envName(key string) string {
	return EnvPrefix + "_" + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(key))
}

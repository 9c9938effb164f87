package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// decodeArgs decodes a pluginConfig's raw args into the plugin's args type,
// rejecting unknown fields.
func decodeArgs(spec schedcore.PluginSpec, raw runtime.RawExtension) (runtime.Object, error) {
	if raw.Object != nil {
		return raw.Object, nil
	}
	if len(bytes.TrimSpace(raw.Raw)) == 0 || string(bytes.TrimSpace(raw.Raw)) == "null" {
		if spec.NewArgs == nil {
			return nil, nil
		}
		return spec.NewArgs(), nil
	}
	if spec.NewArgs == nil {
		return nil, fmt.Errorf("plugin takes no args")
	}
	obj := spec.NewArgs()
	dec := json.NewDecoder(bytes.NewReader(raw.Raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(obj); err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	return obj, nil
}

#!/usr/bin/env bash
# Enforces the dependency direction of docs/architecture.md ("Packages"):
#   cmd -> internal/cli -> internal/* -> plugins -> schedcore
#   schedcore/runtime, schedcore/queue -> schedcore (the runtime over the plugin API)
# - schedcore/... imports no client-go, cli-runtime, cobra, viper, bubbletea,
#   lipgloss or prometheus (transitively);
# - schedcore (the plugin API) does not depend on its runtime
#   (schedcore/runtime, schedcore/queue), nor does any plugin (transitively;
#   plugins' tests may drive the runtime);
# - a plugin does not import another plugin (plugins/names and plugins/helper aside)
#   nor anything under internal/;
# - the drivers (internal/dryrun, explain, live, whatif, capacity, drain) import no
#   plugin (plugins/names aside): the registry comes through internal/engine,
#   gangs and explanations through schedcore's interfaces;
# - only internal/live and internal/kube import client-go informers;
# - no non-test Go file outside hack/ and test/ passes 500 lines (a file
#   that grows past it is split by responsibility; docs/architecture.md).
set -euo pipefail
cd "$(dirname "$0")/.."
mod=github.com/kubectl-sched/kubectl-sched
fail=0

forbidden='^(k8s.io/client-go|k8s.io/cli-runtime|github.com/spf13/cobra|github.com/spf13/viper|charm.land/|github.com/charmbracelet/|github.com/prometheus/)'
for pkg in $(go list ./schedcore/...); do
  bad=$(go list -deps "$pkg" | grep -E "$forbidden" || true)
  if [ -n "$bad" ]; then
    echo "check-imports: $pkg must not depend on: $(echo $bad | tr '\n' ' ')"; fail=1
  fi
done

runtime="^$mod/schedcore/(runtime|queue)(/|\$)"
for pkg in $mod/schedcore $(go list ./plugins/...); do
  bad=$(go list -deps "$pkg" | grep -E "$runtime" || true)
  if [ -n "$bad" ]; then
    echo "check-imports: $pkg must not depend on the runtime: $(echo $bad | tr '\n' ' ')"; fail=1
  fi
done

for pkg in $(go list ./plugins/...); do
  self=${pkg#$mod/plugins/}; self=${self%%/*}
  for imp in $(go list -f '{{join .Imports "\n"}}' "$pkg"); do
    case "$imp" in
      $mod/internal/*) echo "check-imports: $pkg imports $imp (plugins never import internal/)"; fail=1 ;;
      $mod/plugins/names|$mod/plugins/helper) ;;
      $mod/plugins/*)
        other=${imp#$mod/plugins/}; other=${other%%/*}
        if [ "$other" != "$self" ] && [ "$pkg" != "$mod/plugins" ]; then
          echo "check-imports: $pkg imports $imp (plugins do not import each other)"; fail=1
        fi ;;
    esac
  done
done

for pkg in $(go list ./internal/dryrun/... ./internal/explain/... ./internal/live/... ./internal/whatif/... ./internal/capacity/... ./internal/drain/...); do
  for imp in $(go list -f '{{join .Imports "\n"}}' "$pkg"); do
    case "$imp" in
      $mod/plugins/names) ;;
      $mod/plugins|$mod/plugins/*) echo "check-imports: $pkg imports $imp (drivers reach plugins through internal/engine and schedcore)"; fail=1 ;;
    esac
  done
done

for pkg in $(go list ./... ); do
  case "$pkg" in $mod/internal/live*|$mod/internal/kube*|$mod/test/*) continue ;; esac
  if go list -f '{{join .Imports "\n"}}' "$pkg" | grep -q '^k8s.io/client-go/informers'; then
    echo "check-imports: $pkg imports client-go informers (only internal/live and internal/kube may)"; fail=1
  fi
done

while read -r n f; do
  [ "$f" = total ] && continue
  if [ "$n" -gt 500 ]; then
    echo "check-imports: $f has $n lines (at most 500 outside hack/ and test/: split it by responsibility)"; fail=1
  fi
done < <(find . -name '*.go' ! -name '*_test.go' ! -path './hack/*' ! -path './test/*' ! -path './.git/*' -print0 | xargs -0 wc -l)

[ $fail -eq 0 ] && echo "check-imports: ok"
exit $fail

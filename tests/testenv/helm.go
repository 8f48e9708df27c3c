package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"helm.sh/helm/v3/pkg/releaseutil"
	"helm.sh/helm/v3/pkg/strvals"
	"k8s.io/component-base/version"
)

const helmUsage = `usage:
  testenv helm template RELEASE CHART [--namespace NS] [--values F]... [--set K=V]... [--set-string K=V]...
  testenv helm lint CHART [--namespace NS] [--values F]... [--set K=V]... [--set-string K=V]...
`

// helmFlags are the flags both subcommands take, as helm's own.
type helmFlags struct {
	namespace  string
	files      stringList
	sets       stringList
	setStrings stringList
}

// runHelm renders or lints a chart as `helm template` and `helm lint
// --strict` do, with Helm's own libraries and without a cluster: the
// Kubernetes version the chart sees is this binary's.
func runHelm(args []string) int {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, helmUsage)
		return 2
	}
	var f helmFlags
	fs := flag.NewFlagSet("helm "+args[0], flag.ContinueOnError)
	fs.StringVar(&f.namespace, "namespace", "default", "the release's namespace")
	fs.Var(&f.files, "values", "a values file (repeatable; later ones win)")
	fs.Var(&f.sets, "set", "a value, K=V as helm --set (repeatable)")
	fs.Var(&f.setStrings, "set-string", "a string value, K=V (repeatable)")
	positional, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return 2
	}
	switch {
	case args[0] == "template" && len(positional) == 2:
		return helmTemplate(os.Stdout, positional[0], positional[1], f)
	case args[0] == "lint" && len(positional) == 1:
		return helmLint(os.Stdout, positional[0], f)
	}
	fmt.Fprint(os.Stderr, helmUsage)
	return 2
}

// parseInterspersed parses flags before, between and after the positional
// arguments (Go's flag package stops at the first of them), and returns
// the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// values merges the values files in order, then --set and --set-string, as
// helm does (later ones win; maps merge key by key).
func (f helmFlags) values() (map[string]interface{}, error) {
	out := map[string]interface{}{}
	for _, file := range f.files {
		v, err := chartutil.ReadValuesFile(file)
		if err != nil {
			return nil, err
		}
		out = mergeMaps(out, v.AsMap())
	}
	for _, s := range f.sets {
		if err := strvals.ParseInto(s, out); err != nil {
			return nil, fmt.Errorf("--set %s: %w", s, err)
		}
	}
	for _, s := range f.setStrings {
		if err := strvals.ParseIntoString(s, out); err != nil {
			return nil, fmt.Errorf("--set-string %s: %w", s, err)
		}
	}
	return out, nil
}

func mergeMaps(a, b map[string]interface{}) map[string]interface{} {
	out := make(map[string]interface{}, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if bm, ok := v.(map[string]interface{}); ok {
			if am, ok := out[k].(map[string]interface{}); ok {
				out[k] = mergeMaps(am, bm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// kubeVersion is the version of the Kubernetes this binary is built from
// (stamped by scripts/build-testenv.sh), which is the control plane's.
func kubeVersion() (*chartutil.KubeVersion, error) {
	return chartutil.ParseKubeVersion(version.Get().GitVersion)
}

// helmTemplate writes the chart's manifests in install order, each under a
// "# Source:" comment, as `helm template` does. NOTES.txt is left out.
func helmTemplate(out io.Writer, release, chartPath string, f helmFlags) int {
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "testenv helm template: %v\n", err)
		return 1
	}
	vals, err := f.values()
	if err != nil {
		return fail(err)
	}
	chrt, err := loader.Load(chartPath)
	if err != nil {
		return fail(err)
	}
	kv, err := kubeVersion()
	if err != nil {
		return fail(err)
	}
	if want := chrt.Metadata.KubeVersion; want != "" && !chartutil.IsCompatibleRange(want, kv.String()) {
		return fail(fmt.Errorf("chart requires kubeVersion %s, not %s", want, kv))
	}
	if err := chartutil.ProcessDependenciesWithMerge(chrt, vals); err != nil {
		return fail(err)
	}
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = *kv
	top, err := chartutil.ToRenderValues(chrt, vals, chartutil.ReleaseOptions{
		Name: release, Namespace: f.namespace, Revision: 1, IsInstall: true,
	}, caps)
	if err != nil {
		return fail(err)
	}
	files, err := engine.Render(chrt, top)
	if err != nil {
		return fail(err)
	}
	for name := range files {
		if strings.HasSuffix(name, "NOTES.txt") {
			delete(files, name)
		}
	}
	hooks, manifests, err := releaseutil.SortManifests(files, caps.APIVersions, releaseutil.InstallOrder)
	if err != nil {
		return fail(err)
	}
	for _, m := range manifests {
		fmt.Fprintf(out, "---\n# Source: %s\n%s\n", m.Name, m.Content)
	}
	for _, h := range hooks {
		fmt.Fprintf(out, "---\n# Source: %s\n%s\n", h.Path, h.Manifest)
	}
	return 0
}

// helmLint prints every message of Helm's chart linter and fails on a
// warning or an error, as `helm lint --strict` does.
func helmLint(out io.Writer, chartPath string, f helmFlags) int {
	vals, err := f.values()
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv helm lint: %v\n", err)
		return 1
	}
	kv, err := kubeVersion()
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv helm lint: %v\n", err)
		return 1
	}
	linter := lint.AllWithKubeVersion(chartPath, vals, f.namespace, kv)
	failed := 0
	for _, m := range linter.Messages {
		fmt.Fprintln(out, m)
		if m.Severity >= support.WarningSev {
			failed++
		}
	}
	fmt.Fprintf(out, "%d message(s), %d warning(s) or error(s)\n", len(linter.Messages), failed)
	if failed > 0 {
		return 1
	}
	return 0
}

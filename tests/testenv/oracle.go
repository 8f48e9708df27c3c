package main

// "testenv oracle": the default profile of the kube-scheduler this binary is
// built from (go.mod, or the -modfile of another supported version), run in
// process over scenarios read from stdin, printing every node's Filter
// verdict and every Score plugin's score. It is the reference for the C++
// differential test; see README.md ("testenv oracle") for the input and
// output format. Where the versions' APIs differ, oracle_compat_*.go (split
// by build tag) does as each version's scheduler.New does.
//
// The scheduling logic is schedule_one.go's, step by step, for one pod:
// findNodesThatFitPod (RunPreFilterPlugins, honouring a PreFilterResult and a
// rejecting status, then RunFilterPluginsWithNominatedPods per node, which
// counts the scenario's nominated pods) and prioritizeNodes
// (RunPreScorePlugins and RunScorePlugins over the feasible nodes). The
// cluster around it (fake clientset, informers, scheduler cache and
// snapshot, DRA manager, pod nominator) is built in oracle_cluster.go.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/go-logr/logr"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

const oracleUsage = "usage: testenv oracle [--api-defaults=true] < scenarios.jsonl > verdicts.jsonl"

// oracleInput is one scenario: one line of input. Objects may lack
// apiVersion/kind; each list is decoded with its known type.
type oracleInput struct {
	Name                   string                         `json:"name"`
	Nodes                  []corev1.Node                  `json:"nodes"`
	Pods                   []corev1.Pod                   `json:"pods"`
	Namespaces             []corev1.Namespace             `json:"namespaces"`
	Services               []corev1.Service               `json:"services"`
	ReplicaSets            []appsv1.ReplicaSet            `json:"replicaSets"`
	StatefulSets           []appsv1.StatefulSet           `json:"statefulSets"`
	ReplicationControllers []corev1.ReplicationController `json:"replicationControllers"`
	PersistentVolumeClaims []corev1.PersistentVolumeClaim `json:"persistentVolumeClaims"`
	PersistentVolumes      []corev1.PersistentVolume      `json:"persistentVolumes"`
	StorageClasses         []storagev1.StorageClass       `json:"storageClasses"`
	CSINodes               []storagev1.CSINode            `json:"csiNodes"`
	CSIDrivers             []storagev1.CSIDriver          `json:"csiDrivers"`
	CSIStorageCapacities   []storagev1.CSIStorageCapacity `json:"csiStorageCapacities"`
	NominatedPods          []corev1.Pod                   `json:"nominatedPods"` // unassigned, with status.nominatedNodeName
	PodDisruptionBudgets   []policyv1.PodDisruptionBudget `json:"podDisruptionBudgets"`
	Pod                    *corev1.Pod                    `json:"pod"`
}

// oracleInputKeys are the keys a scenario line may have; anything else is
// rejected, so that a misspelt key does not silently drop objects.
var oracleInputKeys = sets.New(
	"name", "nodes", "pods", "namespaces", "services", "replicaSets",
	"statefulSets", "replicationControllers", "persistentVolumeClaims",
	"persistentVolumes", "storageClasses", "csiNodes", "csiDrivers",
	"csiStorageCapacities", "nominatedPods", "podDisruptionBudgets", "pod",
)

// oracleOutput is one line of output.
type oracleOutput struct {
	Name      string                 `json:"name"`
	PreFilter *oraclePhase           `json:"preFilter,omitempty"`
	PreScore  *oraclePhase           `json:"preScore,omitempty"`
	Nodes     map[string]*oracleNode `json:"nodes,omitempty"`
	Weights   map[string]int32       `json:"weights,omitempty"`
	// When no node fits: DefaultPreemption's dry run (oracle_preemption.go).
	Preemption *oraclePreemption `json:"preemption,omitempty"`
	Error      string            `json:"error,omitempty"`
}

// oracleStatus is a framework Status: its code, the plugin it is attributed
// to and its reasons, exactly as kube-scheduler gives them.
type oracleStatus struct {
	Code    string   `json:"code"`
	Plugin  string   `json:"plugin"`
	Reasons []string `json:"reasons"`
}

// oraclePhase is the outcome of an extension point run once per pod
// (PreFilter, PreScore): its status and the plugins that returned Skip.
type oraclePhase struct {
	oracleStatus
	Skipped []string `json:"skipped"`
}

// oracleNode is one node's verdict: feasible with its per-plugin scores, or
// infeasible with the rejecting status.
type oracleNode struct {
	Feasible bool
	Scores   map[string]int64 // normalised (after NormalizeScore), before weight
	Status   oracleStatus
}

// MarshalJSON prints a feasible node as {"feasible":true,"scores":{...}} and
// an infeasible one as {"feasible":false,"plugin":..,"code":..,"reasons":[..]}.
func (n *oracleNode) MarshalJSON() ([]byte, error) {
	if n.Feasible {
		scores := n.Scores
		if scores == nil {
			scores = map[string]int64{}
		}
		return json.Marshal(struct {
			Feasible bool             `json:"feasible"`
			Scores   map[string]int64 `json:"scores"`
		}{true, scores})
	}
	return json.Marshal(struct {
		Feasible bool     `json:"feasible"`
		Plugin   string   `json:"plugin"`
		Code     string   `json:"code"`
		Reasons  []string `json:"reasons"`
	}{false, n.Status.Plugin, n.Status.Code, n.Status.Reasons})
}

// oracle evaluates scenarios with the default profile. One is built per
// process; every scenario gets its own cluster and framework.
type oracle struct {
	ctx         context.Context
	registry    frameworkruntime.Registry
	profile     *schedulerapi.KubeSchedulerProfile
	apiDefaults bool
}

func runOracle(args []string) int {
	fs := flag.NewFlagSet("oracle", flag.ContinueOnError)
	apiDefaults := fs.Bool("api-defaults", true,
		"apply the API server's defaulting (e.g. container requests from limits, namespace label kubernetes.io/metadata.name) to every input object, as a real cluster would")
	fs.Usage = func() { fmt.Fprintln(os.Stderr, oracleUsage); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 0 {
		fmt.Fprintln(os.Stderr, oracleUsage)
		return 2
	}
	quietKlog()
	o, err := newOracle(context.Background(), *apiDefaults)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv oracle: %v\n", err)
		return 1
	}
	if err := o.run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "testenv oracle: %v\n", err)
		return 1
	}
	return 0
}

// quietKlog routes klog (and every contextual logger derived from it) to a
// sink that prints errors on stderr and drops everything else.
func quietKlog() {
	klog.SetLogger(logr.New(errorOnlySink{}))
}

// errorOnlySink is a logr.LogSink that writes only Error calls, to stderr.
type errorOnlySink struct{ name string }

func (errorOnlySink) Init(logr.RuntimeInfo)  {}
func (errorOnlySink) Enabled(level int) bool { return false }
func (errorOnlySink) Info(int, string, ...any) {
}
func (s errorOnlySink) Error(err error, msg string, kv ...any) {
	var b strings.Builder
	b.WriteString("testenv oracle: E ")
	if s.name != "" {
		b.WriteString(s.name + ": ")
	}
	b.WriteString(msg)
	if err != nil {
		fmt.Fprintf(&b, " err=%q", err.Error())
	}
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&b, " %v=%v", kv[i], kv[i+1])
	}
	fmt.Fprintln(os.Stderr, b.String())
}
func (s errorOnlySink) WithValues(...any) logr.LogSink { return s }
func (s errorOnlySink) WithName(name string) logr.LogSink {
	if s.name != "" {
		name = s.name + "/" + name
	}
	return errorOnlySink{name: name}
}

// newOracle builds the in-tree registry and the default profile the way
// scheduler.New does: a defaulted v1 KubeSchedulerConfiguration converted to
// the internal type.
func newOracle(ctx context.Context, apiDefaults bool) (*oracle, error) {
	var versioned configv1.KubeSchedulerConfiguration
	scheme.Scheme.Default(&versioned)
	var cfg schedulerapi.KubeSchedulerConfiguration
	if err := scheme.Scheme.Convert(&versioned, &cfg, nil); err != nil {
		return nil, fmt.Errorf("converting the default configuration: %w", err)
	}
	if len(cfg.Profiles) != 1 {
		return nil, fmt.Errorf("default configuration has %d profiles, want 1", len(cfg.Profiles))
	}
	metrics.Register() // as scheduler.New does; the framework records into these
	return &oracle{
		ctx:         klog.NewContext(ctx, klog.Background()),
		registry:    frameworkplugins.NewInTreeRegistry(),
		profile:     &cfg.Profiles[0],
		apiDefaults: apiDefaults,
	}, nil
}

// run reads scenarios from r, one JSON object a line, and writes one result
// line per scenario to w, in order. Blank lines are skipped.
func (o *oracle) run(r io.Reader, w io.Writer) error {
	in := bufio.NewReaderSize(r, 1<<20)
	out := bufio.NewWriter(w)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if encErr := enc.Encode(o.evaluateLine(line)); encErr != nil {
				return encErr
			}
			// Flush per line: the caller may be waiting for this verdict.
			if flushErr := out.Flush(); flushErr != nil {
				return flushErr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// evaluateLine decodes one scenario line and evaluates it; a line that cannot
// be decoded or evaluated yields {"name":..., "error":...}.
func (o *oracle) evaluateLine(line []byte) *oracleOutput {
	in, name, err := decodeScenario(line)
	if err != nil {
		return &oracleOutput{Name: name, Error: err.Error()}
	}
	res, err := o.evaluate(in)
	if err != nil {
		return &oracleOutput{Name: in.Name, Error: err.Error()}
	}
	return res
}

// decodeScenario decodes one line, rejecting unknown top-level keys. It
// returns the scenario's name even when the rest does not decode.
func decodeScenario(line []byte) (*oracleInput, string, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		return nil, "", fmt.Errorf("not a JSON object: %w", err)
	}
	var name string
	if r, ok := raw["name"]; ok {
		if err := json.Unmarshal(r, &name); err != nil {
			return nil, "", fmt.Errorf("name: %w", err)
		}
	}
	keys := sets.List(sets.KeySet(raw))
	for _, k := range keys {
		if !oracleInputKeys.Has(k) {
			return nil, name, fmt.Errorf("unknown key %q (known: %s)", k, strings.Join(sets.List(oracleInputKeys), ", "))
		}
	}
	var in oracleInput
	for _, k := range keys {
		// One key at a time, so that an error names the list it is in.
		if err := json.Unmarshal(raw[k], in.field(k)); err != nil {
			return nil, name, fmt.Errorf("%s: %w", k, err)
		}
	}
	if in.Pod == nil {
		return nil, name, errors.New(`missing "pod" (the incoming pod)`)
	}
	return &in, name, nil
}

// field returns a pointer to the field of in decoded from key.
func (in *oracleInput) field(key string) any {
	switch key {
	case "name":
		return &in.Name
	case "nodes":
		return &in.Nodes
	case "pods":
		return &in.Pods
	case "namespaces":
		return &in.Namespaces
	case "services":
		return &in.Services
	case "replicaSets":
		return &in.ReplicaSets
	case "statefulSets":
		return &in.StatefulSets
	case "replicationControllers":
		return &in.ReplicationControllers
	case "persistentVolumeClaims":
		return &in.PersistentVolumeClaims
	case "persistentVolumes":
		return &in.PersistentVolumes
	case "storageClasses":
		return &in.StorageClasses
	case "csiNodes":
		return &in.CSINodes
	case "csiDrivers":
		return &in.CSIDrivers
	case "csiStorageCapacities":
		return &in.CSIStorageCapacities
	case "nominatedPods":
		return &in.NominatedPods
	case "podDisruptionBudgets":
		return &in.PodDisruptionBudgets
	case "pod":
		return &in.Pod
	}
	panic("unknown key " + key)
}

// evaluate runs the default profile for the scenario's incoming pod. An
// error means the scenario could not be evaluated at all.
func (o *oracle) evaluate(in *oracleInput) (*oracleOutput, error) {
	objs, err := prepareObjects(in, o.apiDefaults)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(o.ctx)
	defer cancel()
	c, err := newOracleCluster(ctx, o.registry, o.profile.DeepCopy(), objs)
	if err != nil {
		return nil, err
	}
	defer c.close()
	return c.schedule(ctx, in.Name, objs.pod)
}

// schedule replicates schedule_one.go for one pod (findNodesThatFitPod, then
// prioritizeNodes), except that every node is evaluated (there is no
// percentageOfNodesToScore cut-off, and the pod's own nominated node, if it
// has one, is not tried first; nor is the node hint of OpportunisticBatching,
// from v1.35, which a fresh framework has none of anyway) and that the
// feasible nodes are scored even when there is only one. Other pods nominated to a node count there as
// kube-scheduler counts them (RunFilterPluginsWithNominatedPods with the
// scenario's nominator); scores are computed without them. When no node
// fits (a PreFilter rejection included, an error not), DefaultPreemption's
// PostFilter runs as a dry run over the same cycle state and the nodes'
// statuses (oracle_preemption.go).
func (c *oracleCluster) schedule(ctx context.Context, name string, pod *corev1.Pod) (*oracleOutput, error) {
	f := c.framework
	allNodes, err := c.snapshot.NodeInfos().List()
	if err != nil {
		return nil, err
	}
	out := &oracleOutput{
		Name:    name,
		Nodes:   make(map[string]*oracleNode, len(allNodes)),
		Weights: scoreWeights(f),
	}

	// As ScheduleOne: a fresh CycleState with an empty PodsToActivate.
	state := framework.NewCycleState()
	state.Write(framework.PodsToActivateKey, framework.NewPodsToActivate())

	// findNodesThatFitPod: PreFilter.
	preRes, s, unscheduledPlugins := f.RunPreFilterPlugins(ctx, state, pod)
	out.PreFilter = &oraclePhase{
		oracleStatus: toOracleStatus(s, sets.List(unscheduledPlugins)),
		Skipped:      sets.List(state.GetSkipFilterPlugins()),
	}
	// The nodes' statuses, as findNodesThatFitPod's Diagnosis has them.
	diagnosis := framework.NewDefaultNodeToStatus()
	if !s.IsSuccess() {
		// Rejected (or an error): no Filter runs, every node gets the status.
		for _, ni := range allNodes {
			out.Nodes[ni.Node().Name] = &oracleNode{Status: out.PreFilter.oracleStatus}
		}
		if s.IsRejected() {
			diagnosis.SetAbsentNodesStatus(s)
			out.Preemption, err = c.preempt(ctx, state, pod, diagnosis, s.Message())
			if err != nil {
				return nil, fmt.Errorf("preemption: %w", err)
			}
		}
		return out, nil
	}

	// A PreFilterResult restricts the nodes Filter runs on; the others get
	// the status schedule_one.go's findNodesThatFitPod gives them.
	excludedStatus := fwk.NewStatus(fwk.UnschedulableAndUnresolvable,
		fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(unscheduledPlugins)))
	excluded := toOracleStatus(excludedStatus, sets.List(unscheduledPlugins))
	if !preRes.AllNodes() {
		diagnosis.SetAbsentNodesStatus(excludedStatus)
	}

	// Filter, on every node (findNodesThatPassFilters).
	var feasible []fwk.NodeInfo
	filterError := false
	for _, ni := range allNodes {
		nodeName := ni.Node().Name
		if !preRes.AllNodes() && !preRes.NodeNames.Has(nodeName) {
			out.Nodes[nodeName] = &oracleNode{Status: excluded}
			continue
		}
		status := f.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni)
		if !status.IsSuccess() {
			out.Nodes[nodeName] = &oracleNode{Status: toOracleStatus(status, nil)}
			diagnosis.Set(nodeName, status)
			filterError = filterError || !status.IsRejected()
			continue
		}
		out.Nodes[nodeName] = &oracleNode{Feasible: true}
		feasible = append(feasible, ni)
	}
	if len(feasible) == 0 {
		// An error fails the cycle before PostFilter.
		if !filterError {
			out.Preemption, err = c.preempt(ctx, state, pod, diagnosis, "")
			if err != nil {
				return nil, fmt.Errorf("preemption: %w", err)
			}
		}
		return out, nil
	}

	// prioritizeNodes: PreScore and Score over the feasible nodes.
	scores, preScore, err := c.score(ctx, state, pod, feasible, out.Weights)
	out.PreScore = preScore
	if err != nil {
		out.Error = err.Error()
		return out, nil
	}
	for node, s := range scores {
		out.Nodes[node].Scores = s
	}
	return out, nil
}

// score runs RunPreScorePlugins and RunScorePlugins as prioritizeNodes does
// and returns, per node and plugin, the normalised score before weighting
// (RunScorePlugins multiplies it by the weight; the division is exact).
func (c *oracleCluster) score(ctx context.Context, state fwk.CycleState, pod *corev1.Pod, nodes []fwk.NodeInfo, weights map[string]int32) (map[string]map[string]int64, *oraclePhase, error) {
	f := c.framework
	s := f.RunPreScorePlugins(ctx, state, pod, nodes)
	phase := &oraclePhase{
		oracleStatus: toOracleStatus(s, nil),
		Skipped:      sets.List(state.GetSkipScorePlugins()),
	}
	if !s.IsSuccess() {
		return nil, phase, fmt.Errorf("PreScore: %w", s.AsError())
	}
	nodeScores, s := f.RunScorePlugins(ctx, state, pod, nodes)
	if !s.IsSuccess() {
		return nil, phase, fmt.Errorf("Score: %w", s.AsError())
	}
	res := make(map[string]map[string]int64, len(nodeScores))
	for _, ns := range nodeScores {
		m := make(map[string]int64, len(ns.Scores))
		for _, ps := range ns.Scores {
			w := int64(weights[ps.Name])
			if w == 0 {
				return nil, phase, fmt.Errorf("score plugin %q has no weight", ps.Name)
			}
			m[ps.Name] = ps.Score / w
		}
		res[ns.Name] = m
	}
	return res, phase, nil
}

// scoreWeights returns the weight of every Score plugin of the framework.
func scoreWeights(f framework.Framework) map[string]int32 {
	w := map[string]int32{}
	for _, p := range f.ListPlugins().Score.Enabled {
		w[p.Name] = p.Weight
	}
	return w
}

// toOracleStatus converts a framework Status (nil is Success). When the
// status is not attributed to a plugin, plugin is set to the given plugins
// (comma separated): the PreFilter plugins whose PreFilterResult excluded
// the nodes.
func toOracleStatus(s *fwk.Status, plugins []string) oracleStatus {
	res := oracleStatus{Code: s.Code().String(), Reasons: []string{}}
	if s == nil {
		return res
	}
	res.Plugin = s.Plugin()
	if res.Plugin == "" && len(plugins) > 0 && !s.IsSuccess() {
		sorted := append([]string(nil), plugins...)
		sort.Strings(sorted)
		res.Plugin = strings.Join(sorted, ",")
	}
	if r := s.Reasons(); len(r) > 0 {
		res.Reasons = r
	}
	return res
}

package main

// The oracle's PostFilter: what kube-scheduler's DefaultPreemption plugin
// (plugins/defaultpreemption and framework/preemption) would do for a pod
// that no node fits, as a dry run. Evaluator.Preempt's steps are taken one
// by one, with its own functions, except those that act: no pod is
// deleted, no nomination is written, no extender is called.
//
//  1. PodEligibleToPreemptOthers, with the status of the pod's nominated
//     node (the absent nodes' status when it has none).
//  2. findCandidates: the nodes whose status is Unschedulable
//     (NodesForStatusCode), the PodDisruptionBudgets from the plugin's
//     lister, then DryRunPreemption from offset 0 with as many candidates
//     wanted as there are potential nodes. kube-scheduler draws the offset
//     at random and wants max(10% of them, 100); wanting them all makes
//     DryRunPreemption, which checks nodes in parallel and cancels once it
//     has enough, check every one, so that the outcome does not depend on
//     the order the goroutines finish in.
//  3. No candidate: the message is FitError.Error() over the dry run's
//     node statuses, the other nodes "Preemption is not helpful for
//     scheduling", as Preempt builds it.
//  4. Candidates: SelectCandidate's choice, and every candidate tied with
//     it on all five criteria of pickOneNodeForPreemption (which breaks the
//     last tie by Go map order).
//  5. The status Preempt returns once it has evicted the victims (plain
//     Success up to v1.36; from v1.37 a message naming the node and the
//     number of victims: preemptedStatus), for the first of the tied
//     candidates, which kube-scheduler could have chosen as well.
//
// The message is PostFilter's ("preemption: " + the status message), and
// failedScheduling is the pod's FailedScheduling message: FitError.Error()
// with the filter diagnosis and that message, as schedulingCycle sets it.

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	fwk "k8s.io/kube-scheduler/framework"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// oraclePreemption is the "preemption" field of an output line.
type oraclePreemption struct {
	// PostFilter's message: "preemption: ..." when preemption cannot help;
	// when it found a node, "" up to v1.36 and "preemption: found a
	// potential placement for pod on node N, preempting K victims" from
	// v1.37, N being Best[0] (kube-scheduler names its choice among Best).
	Message string `json:"message"`
	// Every node on which evicting pods lets the pod fit.
	Candidates map[string]*oracleCandidate `json:"candidates"`
	// The node SelectCandidate picks, and those tied with it.
	Best []string `json:"best"`
	// The FailedScheduling message: the filter summary and Message.
	FailedScheduling string `json:"failedScheduling"`
}

// oracleCandidate is a node preemption could make room on.
type oracleCandidate struct {
	Victims       []string `json:"victims"` // "namespace/name", as kube-scheduler orders them
	PDBViolations int64    `json:"pdbViolations"`
}

// newOraclePreemption builds the profile's DefaultPreemption plugin (with
// the profile's arguments) on the framework's handle, as NewFramework
// builds the one it runs; the oracle keeps its own to call its parts.
func newOraclePreemption(ctx context.Context, registry frameworkruntime.Registry, profile *schedulerapi.KubeSchedulerProfile, f framework.Framework) (*defaultpreemption.DefaultPreemption, error) {
	var args runtime.Object
	for _, pc := range profile.PluginConfig {
		if pc.Name == defaultpreemption.Name {
			args = pc.Args
		}
	}
	if args == nil {
		return nil, fmt.Errorf("the profile has no %s arguments", defaultpreemption.Name)
	}
	factory, ok := registry[defaultpreemption.Name]
	if !ok {
		return nil, fmt.Errorf("the registry has no %s", defaultpreemption.Name)
	}
	p, err := factory(ctx, args, f)
	if err != nil {
		return nil, fmt.Errorf("building %s: %w", defaultpreemption.Name, err)
	}
	pl, ok := p.(*defaultpreemption.DefaultPreemption)
	if !ok {
		return nil, fmt.Errorf("%s is a %T", defaultpreemption.Name, p)
	}
	return pl, nil
}

// preempt runs the dry run for pod, which no node fits: m holds the
// filter statuses (the absent nodes' status set), preFilterMsg the
// PreFilter rejection's message if any.
func (c *oracleCluster) preempt(ctx context.Context, state fwk.CycleState, pod *corev1.Pod, m *framework.NodeToStatus, preFilterMsg string) (*oraclePreemption, error) {
	pl := c.preemption
	ev := pl.Evaluator
	nodeLister := c.snapshot.NodeInfos()
	allNodes, err := nodeLister.List()
	if err != nil {
		return nil, err
	}
	out := &oraclePreemption{Candidates: map[string]*oracleCandidate{}, Best: []string{}}
	status := fwk.NewStatus(fwk.Success)
	// 1) Eligible.
	if ok, msg := pl.PodEligibleToPreemptOthers(ctx, pod, m.Get(pod.Status.NominatedNodeName)); !ok {
		status = fwk.NewStatus(fwk.Unschedulable, msg)
	} else {
		// 2) findCandidates, wanting every potential node.
		potential, err := m.NodesForStatusCode(nodeLister, fwk.Unschedulable)
		if err != nil {
			return nil, err
		}
		var candidates []preemption.Candidate
		nodeStatuses := framework.NewDefaultNodeToStatus()
		if len(potential) > 0 {
			pdbs, err := ev.PdbLister.List(labels.Everything())
			if err != nil {
				return nil, err
			}
			// kube-scheduler takes the budgets in its informer cache's
			// order, which is not fixed; from v1.37 the violations it counts
			// depend on it where budgets overlap (a victim stops at the first
			// budget it exceeds). The oracle gives the answer for the
			// namespace/name order, the one our side uses.
			sort.Slice(pdbs, func(i, j int) bool {
				if pdbs[i].Namespace != pdbs[j].Namespace {
					return pdbs[i].Namespace < pdbs[j].Namespace
				}
				return pdbs[i].Name < pdbs[j].Name
			})
			candidates, nodeStatuses, err = ev.DryRunPreemption(ctx, state, pod, potential, pdbs, 0, int32(len(potential)))
			if err != nil && len(candidates) == 0 {
				return nil, fmt.Errorf("DryRunPreemption: %w", err)
			}
		}
		if len(candidates) == 0 {
			// 3) As Preempt words it.
			fitError := &framework.FitError{
				Pod:         pod,
				NumAllNodes: len(allNodes),
				Diagnosis:   framework.Diagnosis{NodeToStatus: nodeStatuses},
			}
			fitError.Diagnosis.NodeToStatus.SetAbsentNodesStatus(fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "Preemption is not helpful for scheduling"))
			status = fwk.NewStatus(fwk.Unschedulable, fitError.Error())
		} else {
			// 4) The best candidate and its equals.
			for _, cand := range candidates {
				v := cand.Victims()
				oc := &oracleCandidate{Victims: []string{}, PDBViolations: v.NumPDBViolations}
				for _, p := range v.Pods {
					oc.Victims = append(oc.Victims, p.Namespace+"/"+p.Name)
				}
				out.Candidates[cand.Name()] = oc
			}
			chosen := ev.SelectCandidate(ctx, candidates)
			if chosen == nil {
				return nil, fmt.Errorf("SelectCandidate chose no node of %d candidates", len(candidates))
			}
			out.Best = tiedCandidates(candidates)
			if i := sort.SearchStrings(out.Best, chosen.Name()); i == len(out.Best) || out.Best[i] != chosen.Name() {
				return nil, fmt.Errorf("SelectCandidate chose %s, not one of the best %v", chosen.Name(), out.Best)
			}
			// 5) Preempt's status once the victims are evicted, for the
			// first of the best (SelectCandidate's choice among them is
			// chance, and they all have as many victims): the output does
			// not vary from run to run.
			for _, cand := range candidates {
				if cand.Name() == out.Best[0] {
					status = preemptedStatus(cand)
				}
			}
		}
	}
	// DefaultPreemption.PostFilter's message, then schedulingCycle's.
	if msg := status.Message(); msg != "" {
		out.Message = "preemption: " + msg
	}
	fitError := &framework.FitError{
		Pod:         pod,
		NumAllNodes: len(allNodes),
		Diagnosis: framework.Diagnosis{
			NodeToStatus:  m,
			PreFilterMsg:  preFilterMsg,
			PostFilterMsg: out.Message,
		},
	}
	out.FailedScheduling = fitError.Error()
	return out, nil
}

// tiedCandidates returns, sorted, the candidates pickOneNodeForPreemption
// could return: those with the best score on each of its five criteria in
// turn. A victim without status.startTime counts as starting now, the same
// now for all (kube-scheduler reads the clock anew for each).
func tiedCandidates(candidates []preemption.Candidate) []string {
	now := time.Now()
	startOf := func(p *corev1.Pod) int64 {
		if p.Status.StartTime != nil {
			return p.Status.StartTime.UnixNano()
		}
		return now.UnixNano()
	}
	scores := []func(preemption.Candidate) int64{
		func(c preemption.Candidate) int64 { return -c.Victims().NumPDBViolations },
		func(c preemption.Candidate) int64 {
			return -int64(corev1helpers.PodPriority(c.Victims().Pods[0]))
		},
		func(c preemption.Candidate) int64 {
			var sum int64
			for _, p := range c.Victims().Pods {
				sum += int64(corev1helpers.PodPriority(p)) + int64(math.MaxInt32+1)
			}
			return -sum
		},
		func(c preemption.Candidate) int64 { return -int64(len(c.Victims().Pods)) },
		// util.GetEarliestPodStartTime: the earliest start among the
		// highest-priority victims; the later, the better.
		func(c preemption.Candidate) int64 {
			pods := c.Victims().Pods
			earliest, top := startOf(pods[0]), corev1helpers.PodPriority(pods[0])
			for _, p := range pods {
				switch prio := corev1helpers.PodPriority(p); {
				case prio == top:
					earliest = min(earliest, startOf(p))
				case prio > top:
					top, earliest = prio, startOf(p)
				}
			}
			return earliest
		},
	}
	left := candidates
	for _, score := range scores {
		best := int64(math.MinInt64)
		var kept []preemption.Candidate
		for _, c := range left {
			s := score(c)
			if s > best {
				best, kept = s, nil
			}
			if s == best {
				kept = append(kept, c)
			}
		}
		left = kept
	}
	names := make([]string, 0, len(left))
	for _, c := range left {
		names = append(names, c.Name())
	}
	sort.Strings(names)
	return names
}

//go:build !k8s_1_34 && !k8s_1_35 && !k8s_1_36

package main

// The parts of the oracle's cluster that differ between the Kubernetes
// versions testenv builds against, for the default version, v1.37. Each
// other version has its oracle_compat_k8s1NN.go; oracle_compat_k8s135plus.go
// and oracle_compat_k8s134to136.go hold what several versions share.

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	corev1informers "k8s.io/client-go/informers/core/v1"
	clientset "k8s.io/client-go/kubernetes"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// newSchedulerInformerFactory is the scheduler's informer factory, as
// kube-scheduler makes it (its pod informer skips terminal pods). The
// informer name only names metrics; the oracle makes a factory per
// scenario, and a name may be registered only once.
func newSchedulerInformerFactory(client clientset.Interface) informers.SharedInformerFactory {
	return scheduler.NewInformerFactory(client, 0, nil)
}

// The types corev1informers.Interface returns for PersistentVolumes and
// PersistentVolumeClaims.
type (
	pvInformer  = corev1informers.TypedPersistentVolumeInformer
	pvcInformer = corev1informers.TypedPersistentVolumeClaimInformer
)

// setDeviceTaintOptions sets the resource slice tracker's device taint
// options as scheduler.New does: v1.37 has the DRADeviceTaintRules gate (on
// by default), the rules in resource.k8s.io/v1, and no DeviceClass informer.
func setDeviceTaintOptions(opts *resourceslicetracker.Options, factory informers.SharedInformerFactory) {
	opts.EnableDeviceTaintRules = feature.DefaultFeatureGate.Enabled(features.DRADeviceTaintRules)
	if opts.EnableDeviceTaintRules {
		opts.TaintInformer = factory.Resource().V1().DeviceTaintRules()
	}
}

// newSchedulerCache makes the scheduler cache as scheduler.New does and
// returns the framework options scheduler.New passes besides those common to
// every version (client, informer factory, DRA manager, snapshot). v1.37: no
// API dispatcher (SchedulerAsyncAPICalls is off by default), the
// GenericWorkload and CompositePodGroup gates; the shared CSI manager, the
// snapshot as the mutable snapshot lister too, and the cache as pod group
// manager. The scheduler's event handler for pending pods adds each to its
// pod group (a no-op unless GenericWorkload is on).
func newSchedulerCache(ctx context.Context, factory informers.SharedInformerFactory, snapshot *internalcache.Snapshot, pods []*corev1.Pod) (internalcache.Cache, []frameworkruntime.Option) {
	cache := internalcache.New(ctx, nil,
		feature.DefaultFeatureGate.Enabled(features.GenericWorkload),
		feature.DefaultFeatureGate.Enabled(features.CompositePodGroup))
	for _, p := range pods {
		if p.Spec.NodeName == "" {
			cache.AddPodGroupMember(p)
		}
	}
	return cache, []frameworkruntime.Option{
		frameworkruntime.WithMutableSnapshotLister(snapshot),
		frameworkruntime.WithSharedCSIManager(nodevolumelimits.NewCSIManager(factory.Storage().V1().CSINodes().Lister())),
		frameworkruntime.WithPodGroupManager(cache),
	}
}

// preemptedStatus is Evaluator.Preempt's status when it has evicted the
// victims of the chosen candidate c: in v1.37, Success with a message naming
// the node and counting the victims, which PostFilter prefixes with
// "preemption: ".
func preemptedStatus(c preemption.Candidate) *fwk.Status {
	return fwk.NewStatus(fwk.Success, fmt.Sprintf("found a potential placement for pod on node %v, preempting %d victims", c.Name(), len(c.Victims().Pods)))
}

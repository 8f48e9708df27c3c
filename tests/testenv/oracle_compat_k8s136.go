//go:build k8s_1_36

package main

// What differs in Kubernetes v1.36 (see oracle_compat_k8s137.go for the
// default version).

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/kubernetes/pkg/features"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// setDeviceTaintOptions: v1.36 has the DRADeviceTaintRules gate, and the
// rules in resource.k8s.io/v1beta2.
func setDeviceTaintOptions(opts *resourceslicetracker.Options, factory informers.SharedInformerFactory) {
	opts.EnableDeviceTaintRules = feature.DefaultFeatureGate.Enabled(features.DRADeviceTaintRules)
	if opts.EnableDeviceTaintRules {
		opts.TaintInformer = factory.Resource().V1beta2().DeviceTaintRules()
		opts.ClassInformer = factory.Resource().V1().DeviceClasses()
	}
}

// newSchedulerCache: v1.36's scheduler.New makes the cache with no API
// dispatcher (SchedulerAsyncAPICalls is off by default) and the
// GenericWorkload gate, and gives the framework the shared CSI manager and
// the cache as pod group manager. The scheduler's event handler for pending
// pods adds each to its pod group (a no-op unless GenericWorkload is on).
func newSchedulerCache(ctx context.Context, factory informers.SharedInformerFactory, _ *internalcache.Snapshot, pods []*corev1.Pod) (internalcache.Cache, []frameworkruntime.Option) {
	cache := internalcache.New(ctx, nil, feature.DefaultFeatureGate.Enabled(features.GenericWorkload))
	for _, p := range pods {
		if p.Spec.NodeName == "" {
			cache.AddPodGroupMember(p)
		}
	}
	return cache, []frameworkruntime.Option{
		frameworkruntime.WithSharedCSIManager(nodevolumelimits.NewCSIManager(factory.Storage().V1().CSINodes().Lister())),
		frameworkruntime.WithPodGroupManager(cache),
	}
}

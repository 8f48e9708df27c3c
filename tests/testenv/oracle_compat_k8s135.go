//go:build k8s_1_35

package main

// What differs in Kubernetes v1.35 (see oracle_compat_k8s137.go for the
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

// setDeviceTaintOptions: v1.35 has the DRADeviceTaintRules gate, and the
// rules in resource.k8s.io/v1alpha3.
func setDeviceTaintOptions(opts *resourceslicetracker.Options, factory informers.SharedInformerFactory) {
	opts.EnableDeviceTaintRules = feature.DefaultFeatureGate.Enabled(features.DRADeviceTaintRules)
	if opts.EnableDeviceTaintRules {
		opts.TaintInformer = factory.Resource().V1alpha3().DeviceTaintRules()
		opts.ClassInformer = factory.Resource().V1().DeviceClasses()
	}
}

// newSchedulerCache: v1.35's scheduler.New makes the cache as v1.34's does,
// and gives the framework the shared CSI manager. With GenericWorkload on it
// would also give it a workload manager (fed every pod by the scheduler's
// pod event handlers); the gate is alpha and off by default, and the oracle
// runs with the default gates, so it gives none, as scheduler.New then does.
// (Building one would import backend/workloadmanager, which only v1.35 has,
// and "go mod tidy" of the other versions' module files would fail on it.)
func newSchedulerCache(ctx context.Context, factory informers.SharedInformerFactory, _ *internalcache.Snapshot, _ []*corev1.Pod) (internalcache.Cache, []frameworkruntime.Option) {
	return internalcache.New(ctx, 0, nil), []frameworkruntime.Option{
		frameworkruntime.WithSharedCSIManager(nodevolumelimits.NewCSIManager(factory.Storage().V1().CSINodes().Lister())),
	}
}

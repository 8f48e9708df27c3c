//go:build k8s_1_34

package main

// What differs in Kubernetes v1.34 (see oracle_compat_k8s137.go for the
// default version).

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/kubernetes/pkg/features"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// These moved to k8s.io/kube-scheduler/framework in v1.35.
type (
	sharedDRAManager = framework.SharedDRAManager
	nominatingInfo   = framework.NominatingInfo
)

const modeOverride = framework.ModeOverride

// setDeviceTaintOptions: v1.34 has the DRADeviceTaints gate, and the rules in
// resource.k8s.io/v1alpha3.
func setDeviceTaintOptions(opts *resourceslicetracker.Options, factory informers.SharedInformerFactory) {
	opts.EnableDeviceTaints = feature.DefaultFeatureGate.Enabled(features.DRADeviceTaints)
	if opts.EnableDeviceTaints {
		opts.TaintInformer = factory.Resource().V1alpha3().DeviceTaintRules()
		opts.ClassInformer = factory.Resource().V1().DeviceClasses()
	}
}

// addDRAManagerHandlers: no event handler of v1.34's scheduler feeds the DRA
// manager.
func addDRAManagerHandlers(informers.SharedInformerFactory, *dynamicresources.DefaultDRAManager) ([]func() bool, error) {
	return nil, nil
}

// newSchedulerCache: v1.34's scheduler.New makes the cache with
// durationToExpireAssumedPod 0 and, with SchedulerAsyncAPICalls off (the
// default), no API dispatcher, and gives the framework nothing more.
func newSchedulerCache(ctx context.Context, _ informers.SharedInformerFactory, _ *internalcache.Snapshot, _ []*corev1.Pod) (internalcache.Cache, []frameworkruntime.Option) {
	return internalcache.New(ctx, 0, nil), nil
}

//go:build !k8s_1_34

package main

// What Kubernetes v1.35 and later share, and v1.34 does differently (see
// oracle_compat_k8s134.go).

import (
	"fmt"

	"k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
)

// Types of k8s.io/kube-scheduler/framework that were in
// k8s.io/kubernetes/pkg/scheduler/framework until v1.34.
type (
	sharedDRAManager = fwk.SharedDRAManager
	nominatingInfo   = fwk.NominatingInfo
)

const modeOverride = fwk.ModeOverride

// addDRAManagerHandlers adds the event handler by which the scheduler feeds
// the DRA manager: with DRAExtendedResource on, its extended resource cache
// (of DeviceClasses that name an extended resource) is a handler of the
// DeviceClass informer (addAllEventHandlers, registered because the
// DynamicResources plugin asks for DeviceClass events). It returns the
// registration's HasSynced.
func addDRAManagerHandlers(factory informers.SharedInformerFactory, manager *dynamicresources.DefaultDRAManager) ([]func() bool, error) {
	if !feature.DefaultFeatureGate.Enabled(features.DRAExtendedResource) {
		return nil, nil
	}
	// An *extendedresourcecache.ExtendedResourceCache, as the scheduler
	// asserts; only its event handler methods are needed here (and that
	// package is not in every version's module).
	erCache, ok := manager.DeviceClassResolver().(cache.ResourceEventHandler)
	if !ok {
		return nil, fmt.Errorf("the DRA manager's device class resolver is a %T", manager.DeviceClassResolver())
	}
	reg, err := factory.Resource().V1().DeviceClasses().Informer().AddEventHandler(erCache)
	if err != nil {
		return nil, fmt.Errorf("adding the extended resource cache's event handler: %w", err)
	}
	return []func() bool{reg.HasSynced}, nil
}

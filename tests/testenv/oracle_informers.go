package main

// A SharedInformerFactory for the oracle's framework that records the event
// handler registrations made on its PersistentVolume and
// PersistentVolumeClaim informers.
//
// The VolumeBinding plugin reads PVs and PVCs through assume caches
// (pkg/scheduler/util/assumecache), which are filled by their own event
// handlers on these informers, not from the informers' stores. The factory's
// WaitForCacheSync only waits for the stores, so a scenario evaluated right
// after it could see a PVC missing ("error getting PVC ...", an Error status)
// or an incomplete PV list. The registrations' HasSynced reports when a
// handler has been given every object of the initial list; oracle_cluster.go
// waits for them, as kube-scheduler itself does before scheduling.

import (
	"sync"
	"time"

	"k8s.io/client-go/informers"
	coreinformers "k8s.io/client-go/informers/core"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// handlerRegistrations collects the registrations of event handlers.
type handlerRegistrations struct {
	mu   sync.Mutex
	regs []cache.ResourceEventHandlerRegistration
}

func (r *handlerRegistrations) add(reg cache.ResourceEventHandlerRegistration, err error) (cache.ResourceEventHandlerRegistration, error) {
	if err == nil && reg != nil {
		r.mu.Lock()
		r.regs = append(r.regs, reg)
		r.mu.Unlock()
	}
	return reg, err
}

// hasSynced reports whether every recorded handler has seen its informer's
// initial list.
func (r *handlerRegistrations) hasSynced() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, reg := range r.regs {
		if !reg.HasSynced() {
			return false
		}
	}
	return true
}

// volumeRecordingFactory is a SharedInformerFactory whose
// Core().V1().PersistentVolumes() and PersistentVolumeClaims() informers
// record their handler registrations in regs. Everything else, including
// Start and WaitForCacheSync, is the wrapped factory's: the informers
// themselves are the wrapped factory's shared ones.
type volumeRecordingFactory struct {
	informers.SharedInformerFactory
	regs *handlerRegistrations
}

func newVolumeRecordingFactory(f informers.SharedInformerFactory) *volumeRecordingFactory {
	return &volumeRecordingFactory{SharedInformerFactory: f, regs: &handlerRegistrations{}}
}

func (f *volumeRecordingFactory) Core() coreinformers.Interface {
	return recordingCore{f.SharedInformerFactory.Core(), f.regs}
}

type recordingCore struct {
	coreinformers.Interface
	regs *handlerRegistrations
}

func (c recordingCore) V1() corev1informers.Interface {
	return recordingCoreV1{c.Interface.V1(), c.regs}
}

type recordingCoreV1 struct {
	corev1informers.Interface
	regs *handlerRegistrations
}

func (c recordingCoreV1) PersistentVolumes() pvInformer {
	return recordingPVInformer{c.Interface.PersistentVolumes(), c.regs}
}

func (c recordingCoreV1) PersistentVolumeClaims() pvcInformer {
	return recordingPVCInformer{c.Interface.PersistentVolumeClaims(), c.regs}
}

// pvInformer and pvcInformer are the types corev1informers.Interface's
// PersistentVolumes() and PersistentVolumeClaims() return, which differ by
// version (oracle_compat_*.go). The plugins take the shared informer from
// their Informer().
type recordingPVInformer struct {
	pvInformer
	regs *handlerRegistrations
}

func (i recordingPVInformer) Informer() cache.SharedIndexInformer {
	return recordingInformer{i.pvInformer.Informer(), i.regs}
}

type recordingPVCInformer struct {
	pvcInformer
	regs *handlerRegistrations
}

func (i recordingPVCInformer) Informer() cache.SharedIndexInformer {
	return recordingInformer{i.pvcInformer.Informer(), i.regs}
}

// recordingInformer is a shared informer that records the registration of
// every event handler added to it.
type recordingInformer struct {
	cache.SharedIndexInformer
	regs *handlerRegistrations
}

func (i recordingInformer) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return i.regs.add(i.SharedIndexInformer.AddEventHandler(h))
}

func (i recordingInformer) AddEventHandlerWithResyncPeriod(h cache.ResourceEventHandler, resync time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	return i.regs.add(i.SharedIndexInformer.AddEventHandlerWithResyncPeriod(h, resync))
}

func (i recordingInformer) AddEventHandlerWithOptions(h cache.ResourceEventHandler, opts cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	return i.regs.add(i.SharedIndexInformer.AddEventHandlerWithOptions(h, opts))
}

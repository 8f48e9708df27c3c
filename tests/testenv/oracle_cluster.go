package main

// The cluster "testenv oracle" evaluates a scenario in: a fake clientset
// holding every object, a started and synced informer factory on it, the
// scheduler cache and its snapshot holding the nodes and placed pods, a
// framework for the default profile built as scheduler.New builds it, and
// the pod nominator the framework asks for the pods nominated to a node,
// and a DefaultPreemption plugin of the oracle's own (oracle_preemption.go).

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"    // defaulting of apps/v1 objects
	_ "k8s.io/kubernetes/pkg/apis/core/install"    // defaulting of core/v1 objects
	_ "k8s.io/kubernetes/pkg/apis/policy/install"  // defaulting of policy/v1 objects
	_ "k8s.io/kubernetes/pkg/apis/storage/install" // defaulting of storage/v1 objects
	"k8s.io/kubernetes/pkg/features"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/volumebinding"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"
)

// oracleSyncTimeout bounds the wait for the informers of one scenario.
const oracleSyncTimeout = 30 * time.Second

// oracleObjects are a scenario's objects, validated and defaulted.
type oracleObjects struct {
	nodes  []*corev1.Node
	placed []*corev1.Pod    // pods with spec.nodeName: the scheduler cache's pods
	pod    *corev1.Pod      // the incoming pod
	api    []runtime.Object // everything, for the fake clientset
	// Unassigned pods with status.nominatedNodeName: the nominator's pods.
	nominated []*corev1.Pod
	// Every pod the scheduler's pod informer sees: placed, pending (the
	// incoming pod among them) and nominated.
	pods []*corev1.Pod
}

// prepareObjects validates the scenario's objects, gives pods the namespace
// "default" and a UID when they have none, creates (label-less) namespaces
// that objects use but the scenario does not list, and, if apiDefaults,
// applies the API server's defaulting to every object.
//
// Terminal pods (Succeeded, Failed) are dropped: the scheduler's pod informer
// never sees them. Pods without spec.nodeName go to the clientset only.
// Nominated pods go to the clientset and the nominator; they must have
// status.nominatedNodeName and no spec.nodeName (a bound pod is nominated
// nowhere: list it in pods). One with the incoming pod's namespace and name
// is the incoming pod itself, as the nominator saw it: it is not added to
// the clientset a second time.
func prepareObjects(in *oracleInput, apiDefaults bool) (*oracleObjects, error) {
	objs := &oracleObjects{}
	namespaces := sets.New[string]()
	add := func(obj runtime.Object) {
		if apiDefaults {
			legacyscheme.Scheme.Default(obj)
		}
		objs.api = append(objs.api, obj)
	}
	nsOf := func(ns *string) {
		if *ns == "" {
			*ns = corev1.NamespaceDefault
		}
		namespaces.Insert(*ns)
	}

	nodeNames := sets.New[string]()
	for i := range in.Nodes {
		n := &in.Nodes[i]
		if n.Name == "" {
			return nil, fmt.Errorf("nodes[%d]: no metadata.name", i)
		}
		if nodeNames.Has(n.Name) {
			return nil, fmt.Errorf("nodes[%d]: duplicate node %q", i, n.Name)
		}
		nodeNames.Insert(n.Name)
		add(n)
		objs.nodes = append(objs.nodes, n)
	}
	for i := range in.Pods {
		p := &in.Pods[i]
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if p.Name == "" {
			return nil, fmt.Errorf("pods[%d]: no metadata.name", i)
		}
		nsOf(&p.Namespace)
		if p.UID == "" {
			p.UID = types.UID(fmt.Sprintf("oracle-pod-%d", i))
		}
		add(p)
		objs.pods = append(objs.pods, p)
		if p.Spec.NodeName != "" {
			objs.placed = append(objs.placed, p)
		}
	}
	p := in.Pod
	if p.Name == "" {
		p.Name = "incoming"
	}
	nsOf(&p.Namespace)
	if p.UID == "" {
		p.UID = "oracle-incoming-pod"
	}
	add(p) // it exists in a real cluster too, pending
	objs.pod = p
	objs.pods = append(objs.pods, p)

	for i := range in.NominatedPods {
		np := &in.NominatedPods[i]
		if np.Status.Phase == corev1.PodSucceeded || np.Status.Phase == corev1.PodFailed {
			continue
		}
		switch {
		case np.Name == "":
			return nil, fmt.Errorf("nominatedPods[%d]: no metadata.name", i)
		case np.Status.NominatedNodeName == "":
			return nil, fmt.Errorf("nominatedPods[%d]: no status.nominatedNodeName", i)
		case np.Spec.NodeName != "":
			return nil, fmt.Errorf("nominatedPods[%d]: spec.nodeName is set (a bound pod belongs in pods)", i)
		}
		nsOf(&np.Namespace)
		if np.UID == "" {
			np.UID = types.UID(fmt.Sprintf("oracle-nominated-pod-%d", i))
		}
		if apiDefaults {
			legacyscheme.Scheme.Default(np)
		}
		if np.Namespace != p.Namespace || np.Name != p.Name {
			objs.api = append(objs.api, np)
			objs.pods = append(objs.pods, np)
		}
		objs.nominated = append(objs.nominated, np)
	}

	for i := range in.Services {
		nsOf(&in.Services[i].Namespace)
		add(&in.Services[i])
	}
	for i := range in.ReplicaSets {
		nsOf(&in.ReplicaSets[i].Namespace)
		add(&in.ReplicaSets[i])
	}
	for i := range in.StatefulSets {
		nsOf(&in.StatefulSets[i].Namespace)
		add(&in.StatefulSets[i])
	}
	for i := range in.ReplicationControllers {
		nsOf(&in.ReplicationControllers[i].Namespace)
		add(&in.ReplicationControllers[i])
	}
	for i := range in.PersistentVolumeClaims {
		nsOf(&in.PersistentVolumeClaims[i].Namespace)
		add(&in.PersistentVolumeClaims[i])
	}
	for i := range in.PersistentVolumes {
		add(&in.PersistentVolumes[i])
	}
	for i := range in.StorageClasses {
		add(&in.StorageClasses[i])
	}
	for i := range in.CSINodes {
		add(&in.CSINodes[i])
	}
	for i := range in.CSIDrivers {
		add(&in.CSIDrivers[i])
	}
	for i := range in.CSIStorageCapacities {
		c := &in.CSIStorageCapacities[i]
		if c.Name == "" {
			return nil, fmt.Errorf("csiStorageCapacities[%d]: no metadata.name", i)
		}
		nsOf(&c.Namespace)
		add(c)
	}
	for i := range in.PodDisruptionBudgets {
		pdb := &in.PodDisruptionBudgets[i]
		if pdb.Name == "" {
			return nil, fmt.Errorf("podDisruptionBudgets[%d]: no metadata.name", i)
		}
		nsOf(&pdb.Namespace)
		add(pdb)
	}

	for i := range in.Namespaces {
		if in.Namespaces[i].Name == "" {
			return nil, fmt.Errorf("namespaces[%d]: no metadata.name", i)
		}
		namespaces.Delete(in.Namespaces[i].Name)
		add(&in.Namespaces[i])
	}
	for _, ns := range sets.List(namespaces) {
		add(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	return objs, nil
}

// oracleCluster is the scheduler's view of one scenario.
type oracleCluster struct {
	framework framework.Framework
	// The profile's DefaultPreemption, built on framework's handle.
	preemption *defaultpreemption.DefaultPreemption
	snapshot   *internalcache.Snapshot
	informers  informers.SharedInformerFactory
	cancel     context.CancelFunc
}

// newOracleCluster loads objs into a fake clientset, builds the framework for
// profile on informers of it (and on the DRA manager, as scheduler.New
// does), loads the nodes and placed pods into a scheduler cache, takes its
// snapshot, and starts and syncs the informers.
func newOracleCluster(ctx context.Context, registry frameworkruntime.Registry, profile *schedulerapi.KubeSchedulerProfile, objs *oracleObjects) (_ *oracleCluster, err error) {
	ctx, cancel := context.WithCancel(ctx)
	c := &oracleCluster{cancel: cancel}
	defer func() {
		if err != nil {
			c.close()
		}
	}()
	logger := klog.FromContext(ctx)

	client := fake.NewClientset()
	for _, obj := range objs.api {
		if err := client.Tracker().Add(obj); err != nil {
			return nil, fmt.Errorf("adding %T: %w", obj, err)
		}
	}
	// The scheduler's own factory (its pod informer skips terminal pods),
	// wrapped to record the VolumeBinding assume caches' handlers.
	volumeFactory := newVolumeRecordingFactory(newSchedulerInformerFactory(client))
	c.informers = volumeFactory
	draManager, draSynced, err := newDRAManager(ctx, client, c.informers)
	if err != nil {
		return nil, err
	}

	c.snapshot = internalcache.NewEmptySnapshot()
	// The scheduler cache comes before the framework, as in scheduler.New:
	// newer kube-schedulers hand it to the framework (as its pod group
	// manager). The version's own options follow the common ones.
	cache, versionOptions := newSchedulerCache(ctx, c.informers, c.snapshot, objs.pods)
	options := append([]frameworkruntime.Option{
		frameworkruntime.WithClientSet(client),
		frameworkruntime.WithInformerFactory(c.informers),
		frameworkruntime.WithSharedDRAManager(draManager),
		frameworkruntime.WithSnapshotSharedLister(c.snapshot),
	}, versionOptions...)
	c.framework, err = frameworkruntime.NewFramework(ctx, registry, profile, options...)
	if err != nil {
		return nil, fmt.Errorf("building the framework: %w", err)
	}
	nominator, err := newOracleNominator(objs.nominated)
	if err != nil {
		return nil, err
	}
	c.framework.SetPodNominator(nominator)
	// Before the informers start: it asks for the PDB informer (the
	// framework's own DefaultPreemption has already).
	c.preemption, err = newOraclePreemption(ctx, registry, profile, c.framework)
	if err != nil {
		return nil, err
	}
	if err := checkVolumeHandlers(c.framework, volumeFactory.regs); err != nil {
		return nil, err
	}

	for _, n := range objs.nodes {
		cache.AddNode(logger, n)
	}
	for _, p := range objs.placed {
		if err := cache.AddPod(logger, p); err != nil {
			return nil, fmt.Errorf("adding pod %s/%s to the scheduler cache: %w", p.Namespace, p.Name, err)
		}
	}
	if err := cache.UpdateSnapshot(logger, c.snapshot); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}

	c.informers.Start(ctx.Done())
	// The informers' stores, then the handlers that feed caches of their own:
	// the DRA claim cache and slice tracker, and VolumeBinding's PV and PVC
	// assume caches (kube-scheduler waits for these too).
	synced := append(draSynced, volumeFactory.regs.hasSynced)
	if err := waitForInformers(ctx, c.informers, synced...); err != nil {
		return nil, err
	}
	return c, nil
}

// close stops the informers and the framework.
func (c *oracleCluster) close() {
	c.cancel()
	if c.informers != nil {
		c.informers.Shutdown()
	}
	if c.framework != nil {
		_ = c.framework.Close()
	}
}

// newDRAManager builds the DynamicResources plugin's manager exactly as
// scheduler.New does when the DynamicResourceAllocation feature is on (it is
// by default), and returns what must sync before scheduling.
func newDRAManager(ctx context.Context, client clientset.Interface, factory informers.SharedInformerFactory) (sharedDRAManager, []func() bool, error) {
	if !feature.DefaultFeatureGate.Enabled(features.DynamicResourceAllocation) {
		return nil, nil, nil
	}
	logger := klog.FromContext(ctx)
	claimInformer := factory.Resource().V1().ResourceClaims().Informer()
	claimCache := assumecache.NewAssumeCache(logger, claimInformer, "ResourceClaim", "", nil)
	opts := resourceslicetracker.Options{
		EnableConsumableCapacity: feature.DefaultFeatureGate.Enabled(features.DRAConsumableCapacity),
		SliceInformer:            factory.Resource().V1().ResourceSlices(),
		KubeClient:               client,
	}
	setDeviceTaintOptions(&opts, factory) // the feature gate and informers differ by version
	tracker, err := resourceslicetracker.StartTracker(ctx, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("starting the resource slice tracker: %w", err)
	}
	// The assume cache's own handler registration: synced once it has seen
	// every claim the informer listed (the scheduler waits for it too).
	claimHandler := claimCache.AddEventHandler(cacheNoopHandler{})
	manager := dynamicresources.NewDRAManager(ctx, claimCache, tracker, factory)
	synced := []func() bool{claimHandler.HasSynced, tracker.HasSynced}
	// The scheduler's event handlers that feed the manager (the device
	// class cache for extended resources, in newer versions).
	more, err := addDRAManagerHandlers(factory, manager)
	if err != nil {
		return nil, nil, err
	}
	return manager, append(synced, more...), nil
}

// checkVolumeHandlers makes sure that, when the framework has the
// VolumeBinding plugin, its PV and PVC assume caches registered their handlers
// through the recording factory, so that waiting for regs waits for them.
func checkVolumeHandlers(f framework.Framework, regs *handlerRegistrations) error {
	for _, p := range f.ListPlugins().PreFilter.Enabled {
		if p.Name != volumebinding.Name {
			continue
		}
		regs.mu.Lock()
		n := len(regs.regs)
		regs.mu.Unlock()
		if n < 2 {
			return fmt.Errorf("%s registered %d PV/PVC event handlers, want 2 (its assume caches)", volumebinding.Name, n)
		}
	}
	return nil
}

// waitForInformers waits until every started informer of factory, and every
// extra check, has synced. It asks factory.WaitForCacheSync with an already
// closed stop channel, which checks once and returns, and asks again after a
// short pause: WaitForCacheSync's own polling period (100 ms) would dominate
// the time per scenario, while a fake clientset's informers sync in well
// under a millisecond.
func waitForInformers(ctx context.Context, factory informers.SharedInformerFactory, extra ...func() bool) error {
	closed := make(chan struct{})
	close(closed)
	deadline := time.Now().Add(oracleSyncTimeout)
	pause := 20 * time.Microsecond
	for {
		synced := true
		for typ, ok := range factory.WaitForCacheSync(closed) {
			if !ok {
				synced = false
				if time.Now().After(deadline) {
					return fmt.Errorf("informer for %v did not sync in %v", typ, oracleSyncTimeout)
				}
			}
		}
		for _, hasSynced := range extra {
			if synced && !hasSynced() {
				synced = false
			}
		}
		if synced {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("event handlers (DRA, PV and PVC assume caches) did not sync in %v", oracleSyncTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		if pause < time.Millisecond {
			pause *= 2
		}
	}
}

// oracleNominator is the scheduling queue's PodNominator for one scenario:
// it holds the scenario's nominated pods, by node, in the order given.
// RunFilterPluginsWithNominatedPods asks it for a node's pods and itself
// keeps those of priority >= the incoming pod's and of another UID. With
// none nominated to a node, the Filter plugins run once, on the node as it
// is. Not safe for concurrent use (the oracle filters nodes one at a time).
type oracleNominator struct {
	byNode map[string][]fwk.PodInfo
}

// newOracleNominator nominates each pod to its status.nominatedNodeName.
func newOracleNominator(pods []*corev1.Pod) (*oracleNominator, error) {
	n := &oracleNominator{byNode: map[string][]fwk.PodInfo{}}
	for _, p := range pods {
		pi, err := framework.NewPodInfo(p)
		if err != nil {
			return nil, fmt.Errorf("nominated pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		n.add(pi, p.Status.NominatedNodeName)
	}
	return n, nil
}

func (n *oracleNominator) add(pi fwk.PodInfo, node string) {
	n.DeleteNominatedPodIfExists(pi.GetPod())
	if node != "" {
		n.byNode[node] = append(n.byNode[node], pi)
	}
}

// AddNominatedPod nominates pi to the node nominatingInfo overrides with,
// else to its status.nominatedNodeName (the queue's rule, without its check
// that the pod still exists unbound: nothing here binds or deletes).
func (n *oracleNominator) AddNominatedPod(_ klog.Logger, pi fwk.PodInfo, nominatingInfo *nominatingInfo) {
	node := pi.GetPod().Status.NominatedNodeName
	if nominatingInfo.Mode() == modeOverride {
		node = nominatingInfo.NominatedNodeName
	}
	n.add(pi, node)
}

// DeleteNominatedPodIfExists removes the pod of pod's UID, wherever it is
// nominated.
func (n *oracleNominator) DeleteNominatedPodIfExists(pod *corev1.Pod) {
	for node, pis := range n.byNode {
		for i, pi := range pis {
			if pi.GetPod().UID == pod.UID {
				n.byNode[node] = append(pis[:i:i], pis[i+1:]...)
				if len(n.byNode[node]) == 0 {
					delete(n.byNode, node)
				}
				return
			}
		}
	}
}

// UpdateNominatedPod replaces oldPod by newPodInfo, nominated to its
// status.nominatedNodeName.
func (n *oracleNominator) UpdateNominatedPod(_ klog.Logger, oldPod *corev1.Pod, newPodInfo fwk.PodInfo) {
	n.DeleteNominatedPodIfExists(oldPod)
	n.add(newPodInfo, newPodInfo.GetPod().Status.NominatedNodeName)
}

// NominatedPodsForNode returns the pods nominated to nodeName, in the order
// they were nominated.
func (n *oracleNominator) NominatedPodsForNode(nodeName string) []fwk.PodInfo {
	return append([]fwk.PodInfo(nil), n.byNode[nodeName]...)
}

// cacheNoopHandler is an informer event handler that does nothing.
type cacheNoopHandler struct{}

func (cacheNoopHandler) OnAdd(any, bool)   {}
func (cacheNoopHandler) OnUpdate(any, any) {}
func (cacheNoopHandler) OnDelete(any)      {}

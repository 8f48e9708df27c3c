//go:build k8s_1_34 || k8s_1_35 || k8s_1_36

package main

// What Kubernetes v1.34 to v1.36 share, and v1.37 changed (see
// oracle_compat_k8s137.go).

import (
	"k8s.io/client-go/informers"
	corev1informers "k8s.io/client-go/informers/core/v1"
	clientset "k8s.io/client-go/kubernetes"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
)

func newSchedulerInformerFactory(client clientset.Interface) informers.SharedInformerFactory {
	return scheduler.NewInformerFactory(client, 0)
}

type (
	pvInformer  = corev1informers.PersistentVolumeInformer
	pvcInformer = corev1informers.PersistentVolumeClaimInformer
)

// preemptedStatus is Evaluator.Preempt's status when it has evicted the
// victims of the chosen candidate: Success without a message.
func preemptedStatus(preemption.Candidate) *fwk.Status {
	return fwk.NewStatus(fwk.Success)
}

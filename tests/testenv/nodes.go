package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
	"k8s.io/component-base/version"
)

// nodeIP is the InternalIP of the node with index i:
// 10.(1 + i/64000).((i/250) % 256).(i%250 + 1), i.e. 10.1.(i/250).(i%250+1)
// for the first 64,000 indexes.
func nodeIP(i int) string {
	return fmt.Sprintf("10.%d.%d.%d", 1+i/(250*256), (i/250)%256, i%250+1)
}

func runNodes(args []string) int {
	fs := flag.NewFlagSet("nodes", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig (admin)")
	count := fs.Int("count", 0, "number of nodes")
	start := fs.Int("start", 0, "index of the first node: names are PREFIX<index>, and the index also determines the InternalIP")
	prefix := fs.String("prefix", "node-", "node name prefix")
	cpu := fs.String("cpu", "4", "cpu capacity and allocatable")
	memory := fs.String("memory", "16Gi", "memory capacity and allocatable")
	pods := fs.String("pods", "110", "pods capacity and allocatable")
	storage := fs.String("ephemeral-storage", "100Gi", "ephemeral-storage capacity and allocatable")
	labelsFlag := fs.String("labels", "", "extra labels k=v,k2=v2")
	zones := fs.Int("zones", 0, "if > 0, label node i topology.kubernetes.io/zone=zone-<i % zones>")
	images := fs.Int("images", 0, "images each node reports in status.images, each by a tag and a digest name, drawn from 4x as many in the cluster")
	workers := fs.Int("concurrency", 32, "concurrent requests")
	quiet := fs.Bool("quiet", false, "do not print one line per node")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *kubeconfig == "" || *count <= 0 || fs.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: testenv nodes --kubeconfig F --count N [--start 0] [--prefix node-] [--cpu 4] [--memory 16Gi] [--pods 110] [--ephemeral-storage 100Gi] [--labels k=v,...] [--zones N] [--images N] [--quiet]")
		return 2
	}
	extra := map[string]string{}
	if *labelsFlag != "" {
		for _, kv := range strings.Split(*labelsFlag, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				fmt.Fprintf(os.Stderr, "testenv nodes: bad label %q (want k=v)\n", kv)
				return 2
			}
			extra[k] = v
		}
	}
	resources := corev1.ResourceList{}
	for name, q := range map[corev1.ResourceName]string{
		corev1.ResourceCPU: *cpu, corev1.ResourceMemory: *memory,
		corev1.ResourcePods: *pods, corev1.ResourceEphemeralStorage: *storage,
	} {
		v, err := resource.ParseQuantity(q)
		if err != nil {
			fmt.Fprintf(os.Stderr, "testenv nodes: bad %s quantity %q: %v\n", name, q, err)
			return 2
		}
		resources[name] = v
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv nodes: %v\n", err)
		return 1
	}
	cfg.QPS, cfg.Burst = 5000, 5000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv nodes: %v\n", err)
		return 1
	}

	t0 := time.Now()
	var created, existed atomic.Int64
	idx := make(chan int)
	errs := make(chan error, *count)
	var out sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < *workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range idx {
				name := fmt.Sprintf("%s%d", *prefix, i)
				labels := extra
				if *zones > 0 {
					labels = maps.Clone(extra)
					labels["topology.kubernetes.io/zone"] = fmt.Sprintf("zone-%d", i%*zones)
				}
				isNew, err := ensureNode(cs, name, nodeIP(i), labels, resources, nodeImages(i, *images))
				if err != nil {
					errs <- fmt.Errorf("%s: %w", name, err)
					continue
				}
				if isNew {
					created.Add(1)
				} else {
					existed.Add(1)
				}
				if !*quiet {
					out.Lock()
					fmt.Printf("%s %s\n", name, nodeIP(i))
					out.Unlock()
				}
			}
		}()
	}
	for i := *start; i < *start+*count; i++ {
		idx <- i
	}
	close(idx)
	wg.Wait()
	close(errs)
	failed := 0
	for err := range errs {
		if failed < 10 {
			fmt.Fprintf(os.Stderr, "testenv nodes: %v\n", err)
		}
		failed++
	}
	fmt.Fprintf(os.Stderr, "testenv nodes: %d created, %d already existed, %d failed in %s\n",
		created.Load(), existed.Load(), failed, time.Since(t0).Round(time.Millisecond))
	if failed > 0 {
		return 1
	}
	return 0
}

// nodeImages is what node i reports in status.images when nodes report n
// images each: images (i + k*7) mod 4n for k < n, so that each image is on
// about a quarter of the nodes, as a cluster's shared base images and
// per-team application images are. Sizes run from 20 MB to 1 GB.
func nodeImages(i, n int) []corev1.ContainerImage {
	out := make([]corev1.ContainerImage, 0, n)
	for k := 0; k < n; k++ {
		id := (i + k*7) % (4 * n)
		out = append(out, corev1.ContainerImage{
			Names: []string{
				fmt.Sprintf("registry.example.com/team-%d/app-%d@sha256:%064x", id%16, id, id*2654435761),
				fmt.Sprintf("registry.example.com/team-%d/app-%d:v1.%d", id%16, id, id%5),
			},
			SizeBytes: int64(20+(id*37)%1000) << 20,
		})
	}
	return out
}

// ensureNode creates the Node if needed, adds the labels if missing, and
// (re)writes its status: capacity/allocatable, Ready=True, addresses,
// images.
func ensureNode(cs kubernetes.Interface, name, ip string, extra map[string]string, res corev1.ResourceList, images []corev1.ContainerImage) (bool, error) {
	ctx := context.Background()
	labels := map[string]string{
		"kubernetes.io/hostname": name,
		"kubernetes.io/os":       "linux",
		"kubernetes.io/arch":     "amd64",
	}
	for k, v := range extra {
		labels[k] = v
	}
	isNew := true
	node, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
	}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		isNew = false
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			missing := false
			for k, v := range labels {
				if n.Labels[k] != v {
					missing = true
				}
			}
			if !missing {
				node = n
				return nil
			}
			if n.Labels == nil {
				n.Labels = map[string]string{}
			}
			for k, v := range labels {
				n.Labels[k] = v
			}
			node, err = cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
			return err
		})
	}
	if err != nil {
		return false, err
	}

	now := metav1.Now()
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node.Status = corev1.NodeStatus{
			Capacity:    res.DeepCopy(),
			Allocatable: res.DeepCopy(),
			Phase:       corev1.NodeRunning,
			Conditions: []corev1.NodeCondition{
				cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory"),
				cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure"),
				cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID"),
				cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady"),
			},
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: ip},
				{Type: corev1.NodeHostName, Address: name},
			},
			Images: images,
			NodeInfo: corev1.NodeSystemInfo{
				KubeletVersion:          version.Get().GitVersion, // the Kubernetes this binary is built from
				OperatingSystem:         "linux",
				Architecture:            "amd64",
				ContainerRuntimeVersion: "fake://0.0.0",
			},
		}
		_, err := cs.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			if n, gerr := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{}); gerr == nil {
				node = n
			}
		}
		return err
	})
	return isNew, err
}

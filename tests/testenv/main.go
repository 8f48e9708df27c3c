// Command testenv is a multi-call binary that runs a local Kubernetes control
// plane for the metrics-scheduler tests: etcd (embedded), kube-apiserver,
// kube-controller-manager and optionally the default kube-scheduler, plus an
// in-process kubectl, Helm's template and lint, a helper that creates
// kubelet-less Node objects, and kube-scheduler's default profile as an
// oracle for the differential test.
//
// See README.md for the subcommands and the files written by "testenv up".
package main

import (
	"fmt"
	"os"

	"k8s.io/component-base/version"
)

const usage = `usage: testenv <command> [flags]

commands:
  up --dir DIR [--with-scheduler] [--port-file F] [...]   run the control plane
  nodes --kubeconfig F --count N [...]                    create fake Nodes
  kubectl ...                                             in-process kubectl
  helm template RELEASE CHART [--values F] [--set K=V]    render a chart (helm's library)
  helm lint CHART [--values F] [--set K=V]                lint a chart, strictly
  oracle < scenarios.jsonl                                kube-scheduler's verdicts
  version                                                 the Kubernetes release it is built from
  kube-apiserver ...                                      (used by "up")
  kube-controller-manager ...                             (used by "up")
  kube-scheduler ...                                      (used by "up")
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	cmd, args := os.Args[1], os.Args[2:]
	switch cmd {
	case "up":
		os.Exit(runUp(args))
	case "nodes":
		os.Exit(runNodes(args))
	case "kubectl":
		os.Exit(runKubectl(args))
	case "helm":
		os.Exit(runHelm(args))
	case "oracle":
		os.Exit(runOracle(args))
	case "version":
		fmt.Println(version.Get().GitVersion)
	case "kube-apiserver", "kube-controller-manager", "kube-scheduler":
		os.Exit(runComponent(cmd, args))
	case "-h", "--help", "help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "testenv: unknown command %q\n%s", cmd, usage)
		os.Exit(2)
	}
}

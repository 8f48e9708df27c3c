package main

import (
	"os"

	"github.com/spf13/cobra"

	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	_ "k8s.io/component-base/logs/json/register"          // JSON log format, as in the upstream mains
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics, as in the upstream mains
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric, as in the upstream mains
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"

	_ "time/tzdata" // CronJob time zones, as in kube-apiserver/kube-controller-manager
)

// runComponent runs one upstream control-plane component in this process,
// exactly as its own main() would, with args as its command line.
func runComponent(name string, args []string) int {
	var c *cobra.Command
	switch name {
	case "kube-apiserver":
		c = apiserver.NewAPIServerCommand()
	case "kube-controller-manager":
		c = controllermanager.NewControllerManagerCommand()
	case "kube-scheduler":
		c = scheduler.NewSchedulerCommand()
	}
	os.Args = append([]string{name}, args...)
	c.SetArgs(args)
	return cli.Run(c)
}

// runKubectl runs kubectl in this process with args as its command line.
func runKubectl(args []string) int {
	// kubectl reads os.Args itself (plugins, -v before flag parsing).
	os.Args = append([]string{"kubectl"}, args...)
	logs.GlogSetter(kubectlcmd.GetLogVerbosity(os.Args)) //nolint:errcheck
	c := kubectlcmd.NewDefaultKubectlCommand()
	c.SetArgs(args)
	if err := cli.RunNoErrOutput(c); err != nil {
		kubectlutil.CheckErr(err) // prints and exits non-zero
	}
	return 0
}

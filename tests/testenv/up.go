package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

const (
	schedulerUser   = "system:serviceaccount:metrics-scheduler:metrics-scheduler"
	schedulerGroups = "system:serviceaccounts,system:serviceaccounts:metrics-scheduler,system:authenticated"
	startTimeout    = 120 * time.Second
	stopGrace       = 5 * time.Second
)

// controllers run by kube-controller-manager. An explicit list rather than
// "*": nothing here marks kubelet-less Nodes NotReady, taints them, evicts or
// garbage-collects their pods (node-lifecycle, taint-eviction, pod-gc, ttl
// and node-ipam are all absent), and nothing burns CPU we do not need.
//
// The volume controllers are those that PersistentVolumeClaims need to bind
// to static PersistentVolumes once a scheduler has chosen (the PV binder
// completes the binding a scheduler's PreBind starts by setting the PV's
// claimRef), the finalizers that protect PVCs and PVs in use, and the
// creation of the PVCs of pods' generic ephemeral volumes. No attach/detach
// or expander controller: nothing would attach a volume without kubelets.
var controllers = []string{
	"serviceaccount-token-controller",
	"serviceaccount-controller",
	"root-ca-certificate-publisher-controller",
	"namespace-controller",
	"garbage-collector-controller",
	"deployment-controller",
	"replicaset-controller",
	"replicationcontroller-controller",
	"statefulset-controller",
	"daemonset-controller",
	"job-controller",
	"cronjob-controller",
	"ttl-after-finished-controller",
	"disruption-controller",
	"resourcequota-controller",
	"endpoints-controller",
	"endpointslice-controller",
	"clusterrole-aggregation-controller",
	"persistentvolume-binder-controller",
	"persistentvolumeclaim-protection-controller",
	"persistentvolume-protection-controller",
	"ephemeral-volume-controller",
}

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, " ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

type env struct {
	dir                 string
	server              string // https://127.0.0.1:PORT
	pki                 *pki
	adminToken          string
	schedulerToken      string
	adminKubeconfig     string
	schedulerKubeconfig string
	etcdURL             string
	kcmPort, schedPort  int

	apiserver, kcm, scheduler *child
}

func runUp(args []string) int {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	dir := fs.String("dir", "", "state directory (required); etcd data, pki, logs, kubeconfigs go here")
	withScheduler := fs.Bool("with-scheduler", false, "also run the default kube-scheduler")
	portFile := fs.String("port-file", "", "write the apiserver port to this file once ready")
	keepData := fs.Bool("keep-data", false, "reuse DIR/etcd from a previous run instead of starting empty")
	var apiArgs, kcmArgs, schedArgs stringList
	fs.Var(&apiArgs, "apiserver-arg", "extra kube-apiserver flag, e.g. --apiserver-arg=--v=2 (repeatable)")
	fs.Var(&kcmArgs, "controller-manager-arg", "extra kube-controller-manager flag (repeatable)")
	fs.Var(&schedArgs, "scheduler-arg", "extra kube-scheduler flag (repeatable)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *dir == "" || fs.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: testenv up --dir DIR [--with-scheduler] [--port-file F] [--keep-data] [--apiserver-arg A]... [--controller-manager-arg A]... [--scheduler-arg A]...")
		return 2
	}
	// Ask for the signals before anything starts, so that none is lost.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGUSR1)

	e, etcd, err := bringUp(*dir, *withScheduler, *keepData, apiArgs, kcmArgs, schedArgs)
	if err != nil {
		logf("%v", err)
		if e != nil {
			e.shutdown(etcd)
		}
		return 1
	}
	if *portFile != "" {
		if err := writeFileAtomic(*portFile, strings.TrimPrefix(e.server, "https://127.0.0.1:")+"\n"); err != nil {
			logf("%v", err)
			e.shutdown(etcd)
			return 1
		}
	}
	fmt.Printf("testenv ready server=%s dir=%s\n", e.server, e.dir)

	for {
		select {
		case s := <-sigs:
			switch s {
			case syscall.SIGUSR1:
				if err := e.restartAPIServer(); err != nil {
					logf("apiserver restart failed: %v", err)
					continue
				}
				fmt.Println("testenv apiserver restarted")
			default:
				logf("%v: stopping", s)
				e.shutdown(etcd)
				return 0
			}
		case err := <-etcd.Err():
			logf("etcd failed: %v", err)
			e.shutdown(etcd)
			return 1
		}
	}
}

// bringUp starts everything and returns once the cluster is usable. On error
// it returns whatever was started so that the caller can stop it.
func bringUp(dir string, withScheduler, keepData bool, apiArgs, kcmArgs, schedArgs []string) (*env, *embed.Etcd, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, err
	}
	if !keepData {
		if err := os.RemoveAll(filepath.Join(dir, "etcd")); err != nil {
			return nil, nil, err
		}
	}
	for _, d := range []string{dir, filepath.Join(dir, "logs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, nil, err
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "etcd"), 0o700); err != nil { // etcd wants 0700
		return nil, nil, err
	}
	for _, f := range []string{"env", "kube-apiserver.pid", "kube-controller-manager.pid", "kube-scheduler.pid"} {
		_ = os.Remove(filepath.Join(dir, f))
	}
	t0 := time.Now()

	e := &env{dir: dir, adminToken: randomToken(), schedulerToken: randomToken()}
	if e.pki, err = writePKI(filepath.Join(dir, "pki")); err != nil {
		return nil, nil, fmt.Errorf("pki: %w", err)
	}
	ports, err := freePorts(5)
	if err != nil {
		return nil, nil, err
	}
	etcdClient, etcdPeer, apiPort := ports[0], ports[1], ports[2]
	e.kcmPort, e.schedPort = ports[3], ports[4]
	e.server = fmt.Sprintf("https://127.0.0.1:%d", apiPort)

	// etcd, in this process.
	etcd, err := startEtcd(dir, etcdClient, etcdPeer)
	if err != nil {
		return nil, nil, fmt.Errorf("etcd: %w", err)
	}
	e.etcdURL = fmt.Sprintf("http://127.0.0.1:%d", etcdClient)

	if err := e.writeCredentials(); err != nil {
		return e, etcd, err
	}

	sp := newSpawner()
	logs := filepath.Join(dir, "logs")
	e.apiserver = &child{
		name: "kube-apiserver", sp: sp,
		logPath: filepath.Join(logs, "kube-apiserver.log"),
		pidPath: filepath.Join(dir, "kube-apiserver.pid"),
		args:    append(e.apiserverFlags(apiPort), apiArgs...),
	}
	if err := e.apiserver.start(); err != nil {
		return e, etcd, err
	}
	if err := e.waitAPIServer(); err != nil {
		return e, etcd, err
	}
	logf("kube-apiserver ready after %s", time.Since(t0).Round(time.Millisecond))

	e.kcm = &child{
		name: "kube-controller-manager", sp: sp,
		logPath: filepath.Join(logs, "kube-controller-manager.log"),
		pidPath: filepath.Join(dir, "kube-controller-manager.pid"),
		args:    append(e.controllerManagerFlags(), kcmArgs...),
	}
	if err := e.kcm.start(); err != nil {
		return e, etcd, err
	}
	if withScheduler {
		flags, err := e.schedulerFlags()
		if err != nil {
			return e, etcd, err
		}
		e.scheduler = &child{
			name: "kube-scheduler", sp: sp,
			logPath: filepath.Join(logs, "kube-scheduler.log"),
			pidPath: filepath.Join(dir, "kube-scheduler.pid"),
			args:    append(flags, schedArgs...),
		}
		if err := e.scheduler.start(); err != nil {
			return e, etcd, err
		}
	}
	if err := e.waitDefaultServiceAccount(); err != nil {
		return e, etcd, err
	}
	if err := e.writeEnv(); err != nil {
		return e, etcd, err
	}
	logf("cluster ready after %s", time.Since(t0).Round(time.Millisecond))
	return e, etcd, nil
}

func startEtcd(dir string, clientPort, peerPort int) (*embed.Etcd, error) {
	cfg := embed.NewConfig()
	cfg.Name = "testenv"
	cfg.Dir = filepath.Join(dir, "etcd")
	cu := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", clientPort)}
	pu := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", peerPort)}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{cu}, []url.URL{cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{pu}, []url.URL{pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.Logger = "zap"
	cfg.LogLevel = "warn"
	cfg.LogOutputs = []string{filepath.Join(dir, "logs", "etcd.log")}
	// A throw-away test cluster: durability is worth nothing, write latency is.
	cfg.UnsafeNoFsync = true
	cfg.QuotaBackendBytes = 8 << 30
	// Benchmarks load a 2-core machine: keep "slow request" warnings for
	// requests that really are slow, or the log fills with them.
	cfg.WarningApplyDuration = 2 * time.Second
	cfg.WarningUnaryRequestDuration = 2 * time.Second
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case err := <-e.Err():
		e.Close()
		return nil, err
	case <-time.After(startTimeout):
		e.Close()
		return nil, errors.New("etcd did not become ready")
	}
}

func (e *env) path(name string) string { return filepath.Join(e.dir, name) }

// writeCredentials writes the token file, the token files for tests, and the
// two kubeconfigs.
func (e *env) writeCredentials() error {
	tokens := fmt.Sprintf("%s,admin,testenv-admin,\"system:masters\"\n%s,%s,testenv-metrics-scheduler,\"%s\"\n",
		e.adminToken, e.schedulerToken, schedulerUser, schedulerGroups)
	if err := os.WriteFile(e.path("pki/tokens.csv"), []byte(tokens), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(e.path("admin.token"), []byte(e.adminToken+"\n"), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(e.path("scheduler.token"), []byte(e.schedulerToken+"\n"), 0o600); err != nil {
		return err
	}
	// admin: CA inline; scheduler: CA by path. Both forms get exercised.
	e.adminKubeconfig = e.path("admin.kubeconfig")
	e.schedulerKubeconfig = e.path("scheduler.kubeconfig")
	if err := writeKubeconfig(e.adminKubeconfig, "admin", &clientcmdapi.Cluster{
		Server: e.server, CertificateAuthorityData: e.pki.CAPEM,
	}, e.adminToken); err != nil {
		return err
	}
	return writeKubeconfig(e.schedulerKubeconfig, "metrics-scheduler", &clientcmdapi.Cluster{
		Server: e.server, CertificateAuthority: e.pki.CACert,
	}, e.schedulerToken)
}

func writeKubeconfig(path, user string, cluster *clientcmdapi.Cluster, token string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["testenv"] = cluster
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["testenv-"+user] = &clientcmdapi.Context{Cluster: "testenv", AuthInfo: user, Namespace: "default"}
	cfg.CurrentContext = "testenv-" + user
	return clientcmd.WriteToFile(*cfg, path)
}

func (e *env) apiserverFlags(port int) []string {
	return []string{
		"--etcd-servers=" + e.etcdURL,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--advertise-address=127.0.0.1",
		// The "kubernetes" Service endpoints may not be loopback addresses:
		// do not try to maintain them.
		"--endpoint-reconciler-type=none",
		"--tls-cert-file=" + e.pki.ServerCert,
		"--tls-private-key-file=" + e.pki.ServerKey,
		"--client-ca-file=" + e.pki.CACert,
		// Request-header (front proxy) auth: the aggregator's client cert, and
		// the CA that kube-controller-manager/kube-scheduler's delegated
		// authentication expect to find in extension-apiserver-authentication.
		"--requestheader-client-ca-file=" + e.pki.CACert,
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + e.pki.ProxyCert,
		"--proxy-client-key-file=" + e.pki.ProxyKey,
		"--token-auth-file=" + e.path("pki/tokens.csv"),
		"--authorization-mode=Node,RBAC",
		"--service-account-key-file=" + e.pki.SAPub,
		"--service-account-signing-key-file=" + e.pki.SAKey,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-cluster-ip-range=10.0.0.0/24",
		"--allow-privileged=true",
		// Nodes are created by "testenv nodes", not by kubelets, and no node
		// lifecycle controller runs to lift the not-ready taint this would add.
		"--disable-admission-plugins=TaintNodesByCondition",
		"--max-requests-inflight=3000",
		"--max-mutating-requests-inflight=1000",
		"--cert-dir=" + e.path("pki/apiserver"),
	}
}

func (e *env) controllerManagerFlags() []string {
	return []string{
		"--kubeconfig=" + e.adminKubeconfig,
		"--authentication-kubeconfig=" + e.adminKubeconfig,
		"--authorization-kubeconfig=" + e.adminKubeconfig,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(e.kcmPort),
		"--cert-dir=" + e.path("pki/kube-controller-manager"),
		"--leader-elect=false",
		"--controllers=" + strings.Join(controllers, ","),
		"--kube-api-qps=1000",
		"--kube-api-burst=2000",
		"--service-account-private-key-file=" + e.pki.SAKey,
		"--root-ca-file=" + e.pki.CACert,
		"--service-cluster-ip-range=10.0.0.0/24",
	}
}

func (e *env) schedulerFlags() ([]string, error) {
	cfgPath := e.path("kube-scheduler.yaml")
	cfg := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
  qps: 5000
  burst: 5000
leaderElection:
  leaderElect: false
`, e.adminKubeconfig)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	return []string{
		"--config=" + cfgPath,
		"--authentication-kubeconfig=" + e.adminKubeconfig,
		"--authorization-kubeconfig=" + e.adminKubeconfig,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(e.schedPort),
		"--cert-dir=" + e.path("pki/kube-scheduler"),
	}, nil
}

// waitAPIServer polls /readyz until it answers "ok", or the process exits.
func (e *env) waitAPIServer() error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(e.pki.CAPEM)
	client := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true},
	}
	deadline := time.Now().Add(startTimeout)
	exited := e.apiserver.done()
	var last string
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("kube-apiserver exited during start-up; see %s", e.apiserver.logPath)
		default:
		}
		req, _ := http.NewRequest("GET", e.server+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+e.adminToken)
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && strings.TrimSpace(string(body)) == "ok" {
				return nil
			}
			last = fmt.Sprintf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
		} else {
			last = err.Error()
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("kube-apiserver not ready after %s: %s", startTimeout, last)
}

// waitDefaultServiceAccount waits for the default namespace and its default
// ServiceAccount: ServiceAccount admission is on, so pods need it.
func (e *env) waitDefaultServiceAccount() error {
	cfg, err := clientcmd.BuildConfigFromFlags("", e.adminKubeconfig)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	var last error
	for ctx.Err() == nil {
		if _, last = cs.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); last == nil {
			if _, last = cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{}); last == nil {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("default ServiceAccount did not appear: %v", last)
}

// writeEnv writes DIR/env, shell-sourceable KEY=VALUE lines.
func (e *env) writeEnv() error {
	var b strings.Builder
	kv := func(k, v string) { fmt.Fprintf(&b, "%s=%s\n", k, shellQuote(v)) }
	kv("TESTENV_DIR", e.dir)
	kv("TESTENV_SERVER", e.server)
	kv("TESTENV_CA", e.pki.CACert)
	kv("TESTENV_ADMIN_TOKEN", e.adminToken)
	kv("TESTENV_SCHEDULER_TOKEN", e.schedulerToken)
	kv("TESTENV_ADMIN_KUBECONFIG", e.adminKubeconfig)
	kv("TESTENV_SCHEDULER_KUBECONFIG", e.schedulerKubeconfig)
	kv("TESTENV_ETCD", e.etcdURL)
	kv("TESTENV_PID", strconv.Itoa(os.Getpid()))
	kv("TESTENV_APISERVER_PID", strconv.Itoa(e.apiserver.pid()))
	kv("TESTENV_CONTROLLER_MANAGER_PID", strconv.Itoa(e.kcm.pid()))
	kv("TESTENV_CONTROLLER_MANAGER_SERVER", fmt.Sprintf("https://127.0.0.1:%d", e.kcmPort))
	if e.scheduler != nil {
		kv("TESTENV_SCHEDULER_PID", strconv.Itoa(e.scheduler.pid()))
		kv("TESTENV_KUBE_SCHEDULER_SERVER", fmt.Sprintf("https://127.0.0.1:%d", e.schedPort))
	}
	return writeFileAtomic(e.path("env"), b.String())
}

func (e *env) restartAPIServer() error {
	t0 := time.Now()
	e.apiserver.kill()
	if err := e.apiserver.start(); err != nil {
		return err
	}
	if err := e.waitAPIServer(); err != nil {
		return err
	}
	logf("kube-apiserver restarted in %s", time.Since(t0).Round(time.Millisecond))
	return e.writeEnv()
}

// shutdown stops the clients of the apiserver first, then the apiserver,
// then etcd. Safe on a partly started env.
func (e *env) shutdown(etcd *embed.Etcd) {
	var wg sync.WaitGroup
	for _, c := range []*child{e.scheduler, e.kcm} {
		if c != nil {
			wg.Add(1)
			go func(c *child) { defer wg.Done(); c.stop(stopGrace); _ = os.Remove(c.pidPath) }(c)
		}
	}
	wg.Wait()
	if e.apiserver != nil {
		e.apiserver.stop(stopGrace)
		_ = os.Remove(e.apiserver.pidPath)
	}
	if etcd != nil {
		etcd.Close()
	}
	_ = os.Remove(e.path("env"))
}

// freePorts returns n distinct free TCP ports on 127.0.0.1.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func writeFileAtomic(path, data string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// shellQuote leaves plain values bare (so the file is also trivially
// parseable as KEY=VALUE) and single-quotes anything else.
func shellQuote(v string) string {
	for _, r := range v {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/:._-+=,@%", r)) {
			return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
		}
	}
	return v
}

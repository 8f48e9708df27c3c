package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// spawner starts every child process from one goroutine locked to one OS
// thread for the life of the orchestrator. Pdeathsig fires when the *thread*
// that forked the child exits, not the process; a thread that never exits
// makes it mean "when the orchestrator dies", which is what we want.
type spawner struct{ reqs chan spawnReq }

type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

func newSpawner() *spawner {
	s := &spawner{reqs: make(chan spawnReq)}
	go func() {
		runtime.LockOSThread() // never unlocked: this thread lives as long as the process
		for r := range s.reqs {
			r.done <- r.cmd.Start()
		}
	}()
	return s
}

func (s *spawner) start(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	s.reqs <- spawnReq{cmd, done}
	return <-done
}

// child is one control-plane component running as "<self> <name> <args...>".
type child struct {
	name    string
	args    []string
	logPath string
	pidPath string
	sp      *spawner

	mu       sync.Mutex
	cmd      *exec.Cmd
	exited   chan struct{} // closed when the current process has been reaped
	stopping bool          // exit was asked for by us: do not report it
}

func (c *child) start() error {
	self, err := os.Executable()
	if err != nil {
		self = os.Args[0]
	}
	lf, err := os.OpenFile(c.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer lf.Close() // the child keeps its own descriptor
	fmt.Fprintf(lf, "==== testenv: starting %s at %s\n", c.name, time.Now().Format(time.RFC3339Nano))

	cmd := exec.Command(self, append([]string{c.name}, c.args...)...)
	cmd.Stdout = lf
	cmd.Stderr = lf
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Pdeathsig: syscall.SIGKILL, // orchestrator gone => child gone
		Setpgid:   true,            // a terminal's ^C reaches only the orchestrator, which stops children in order
	}
	if err := c.sp.start(cmd); err != nil {
		return fmt.Errorf("start %s: %w", c.name, err)
	}
	exited := make(chan struct{})
	c.mu.Lock()
	c.cmd, c.exited, c.stopping = cmd, exited, false
	c.mu.Unlock()
	if err := os.WriteFile(c.pidPath, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
		return err
	}
	go func() {
		err := cmd.Wait()
		c.mu.Lock()
		stopping := c.stopping
		c.mu.Unlock()
		if !stopping {
			logf("%s (pid %d) exited unexpectedly: %v (see %s)", c.name, cmd.Process.Pid, err, c.logPath)
		}
		close(exited)
	}()
	return nil
}

func (c *child) pid() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil {
		return 0
	}
	return c.cmd.Process.Pid
}

// done returns a channel closed when the current process has exited.
func (c *child) done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.exited
}

// kill sends SIGKILL and waits for the process to be reaped.
func (c *child) kill() {
	c.stop(0)
}

// stop sends SIGTERM, waits up to grace, then SIGKILL. grace 0 means SIGKILL at once.
func (c *child) stop(grace time.Duration) {
	c.mu.Lock()
	cmd, exited := c.cmd, c.exited
	c.stopping = true
	c.mu.Unlock()
	if cmd == nil {
		return
	}
	if grace > 0 {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
			return
		case <-time.After(grace):
			logf("%s did not stop within %s; killing it", c.name, grace)
		}
	}
	_ = cmd.Process.Kill()
	<-exited
}

// logf writes a brief progress line to the orchestrator's stderr.
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "testenv: "+format+"\n", args...)
}

package cluster

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is one control-plane program started by the harness, in its own
// process group, with its output in a log file in the state directory.
type Process struct {
	// Name is the program's short name ("etcd", "kube-apiserver", ...).
	Name string
	// LogFile holds the program's stdout and stderr.
	LogFile string
	// Port is the port it serves on, where the harness chose one
	// (kube-scheduler: its secure port, with /metrics).
	Port int

	cmd      *exec.Cmd
	log      *os.File
	done     chan struct{} // closed when the process has exited and been reaped
	waitErr  error
	stopOnce sync.Once
}

// startProcess runs bin with args, its output going to logFile. The child gets
// its own process group (so Stop reaches anything it forks) and SIGKILL when
// the harness process dies, so a test binary killed by -timeout leaves no
// control plane behind.
func startProcess(name, bin string, args []string, logFile string) (*Process, error) {
	f, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening log for %s: %w", name, err)
	}
	fmt.Fprintf(f, "# %s %s\n", bin, strings.Join(args, " "))
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Process{Name: name, LogFile: logFile, cmd: cmd, log: f, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// Pid returns the process id (also its process group id).
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited is closed once the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.done }

// exitError describes how the process ended; call it only after Exited.
func (p *Process) exitError() error {
	if p.waitErr != nil {
		return fmt.Errorf("%s exited: %w", p.Name, p.waitErr)
	}
	return fmt.Errorf("%s exited", p.Name)
}

// Stop sends SIGTERM to the process group, then SIGKILL after grace, and waits
// for the process to be reaped. The group is signalled only while its leader
// is unreaped, so its id cannot have been reused. Safe to call more than once
// and after the process has exited by itself.
func (p *Process) Stop(grace time.Duration) {
	p.stopOnce.Do(func() {
		select {
		case <-p.done:
			return
		default:
		}
		pgid := p.cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-p.done
		}
	})
}

// Kill sends SIGKILL to the process group (no chance to clean up, as a
// crash or an OOM kill) and waits for the process to be reaped.
func (p *Process) Kill() {
	p.stopOnce.Do(func() {
		select {
		case <-p.done:
			return
		default:
		}
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	})
}

// tail returns the last n lines of the process's log.
func (p *Process) tail(n int) string {
	return tailFile(p.LogFile, n)
}

func tailFile(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer f.Close()
	ring := make([]string, 0, n)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		if len(ring) == n {
			ring = ring[1:]
		}
		ring = append(ring, sc.Text())
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
		ring = append(ring, fmt.Sprintf("(reading log: %v)", err))
	}
	return strings.Join(ring, "\n")
}

// dumpLogs writes the last lines of each log to w, oldest process first.
func dumpLogs(w io.Writer, procs []*Process, lines int) {
	for _, p := range procs {
		fmt.Fprintf(w, "----- last %d lines of %s (%s) -----\n%s\n", lines, p.Name, filepath.Base(p.LogFile), p.tail(lines))
	}
}

package testutil

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// ImpostorUID is the user an impostor runs as: nobody.
const ImpostorUID = 65534

// envImpostor, set to a socket path, makes a test binary that calls
// ImpostorMain listen there as an impostor instead of running its tests.
const envImpostor = "TASKSESSIOND_TEST_IMPOSTOR"

// ImpostorMain turns this test binary into an impostor when StartImpostor
// started it; TestMain calls it first. An impostor is another user's
// process posing as the daemon: it answers every request with an error
// whose message is "IMPOSTOR" and prints each line it reads, so that a
// test sees whether a client sent it anything.
func ImpostorMain() {
	sock := os.Getenv(envImpostor)
	if sock == "" {
		return
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(1)
	}
	var mu sync.Mutex
	fmt.Println("ready")
	for {
		nc, err := ln.Accept()
		if err != nil {
			os.Exit(1)
		}
		go func() {
			defer nc.Close()
			sc := bufio.NewScanner(nc)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				mu.Lock()
				fmt.Printf("read %s\n", sc.Bytes())
				mu.Unlock()
				var req struct {
					ID json.RawMessage `json:"id"`
				}
				json.Unmarshal(sc.Bytes(), &req)
				if req.ID == nil {
					req.ID = json.RawMessage("null")
				}
				fmt.Fprintf(nc, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"IMPOSTOR"}}`+"\n", req.ID)
			}
		}()
	}
}

// Impostor is a process of another user listening on a socket.
type Impostor struct {
	Socket string
	mu     sync.Mutex
	read   strings.Builder
}

// Read returns the lines the impostor has read so far.
func (i *Impostor) Read() string {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.read.String()
}

// StartImpostor runs this test binary as ImpostorUID, listening on
// dir/d.sock, until the test ends; dir must be one that user can write to.
// It needs root (the test is skipped otherwise) and a TestMain that calls
// ImpostorMain.
func StartImpostor(tb testing.TB, dir string) *Impostor {
	tb.Helper()
	if os.Getuid() != 0 {
		tb.Skip("running a process as another user needs root")
	}
	exe, err := copyForAll()
	if exe != "" {
		tb.Cleanup(func() { os.RemoveAll(filepath.Dir(exe)) })
	}
	if err != nil {
		tb.Fatalf("impostor: %v", err)
	}
	imp := &Impostor{Socket: filepath.Join(dir, "d.sock")}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), envImpostor+"="+imp.Socket)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: ImpostorUID, Gid: ImpostorUID}}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start the impostor: %v", err)
	}
	tb.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	r := bufio.NewReader(out)
	first, err := r.ReadString('\n')
	if err != nil || first != "ready\n" {
		tb.Fatalf("the impostor did not start: %q %v", first, err)
	}
	go func() {
		for {
			line, err := r.ReadString('\n')
			imp.mu.Lock()
			imp.read.WriteString(line)
			imp.mu.Unlock()
			if err != nil {
				io.Copy(io.Discard, r)
				return
			}
		}
	}()
	return imp
}

// ImpostorDir returns a new directory that ImpostorUID owns, as another
// user would make the default socket directory before this user's daemon
// does; its parent lets that user in.
func ImpostorDir(tb testing.TB) string {
	tb.Helper()
	base, err := os.MkdirTemp("", "tsdi")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o711); err != nil {
		tb.Fatal(err)
	}
	dir := filepath.Join(base, "tasksessiond-0")
	if err := os.Mkdir(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.Chown(dir, ImpostorUID, ImpostorUID); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// copyForAll copies this test binary where another user can run it (the
// go tool builds it in a directory only its user can enter).
func copyForAll() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "tsd-impostor")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "impostor")
	if err := os.Chmod(dir, 0o755); err != nil {
		return path, err
	}
	src, err := os.Open(exe)
	if err != nil {
		return path, err
	}
	defer src.Close()
	dst, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return path, err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return path, err
	}
	return path, dst.Close()
}

package test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkCLIShowRun10k times `swmgr cli -c 'show run'` (the whole
// process: start, connect, read every kind, render) with 10,000 VRFs in the
// store, loaded with ResetConfigToFile from a saved file.
func BenchmarkCLIShowRun10k(b *testing.B) {
	s := startServer(b, "")
	file := filepath.Join(s.dir, "startup-config")
	s.expect(b, 200, "POST", "/action/SaveConfig", "{}")
	raw, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		b.Fatal(err)
	}
	var vrfs []any
	for i := 0; i < 10000; i++ {
		vrfs = append(vrfs, map[string]any{"Vrf": fmt.Sprintf("v%05d", i), "Name": ""})
	}
	doc["ConfigData"].(map[string]any)["Vrf"] = vrfs
	raw, _ = json.Marshal(doc)
	big := filepath.Join(s.dir, "big-config")
	if err := os.WriteFile(big, raw, 0o600); err != nil {
		b.Fatal(err)
	}
	s.expect(b, 200, "POST", "/action/ResetConfigToFile", fmt.Sprintf(`{"SrcFileURI":"//%s"}`, big))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, code := runCLI(b, s, "", "-c", "show run")
		if code != 0 || strings.Count(out, "\nvrf v") != 10000 {
			b.Fatalf("exit %d, %d vrfs", code, strings.Count(out, "\nvrf v"))
		}
	}
}

// BenchmarkCLIFirstPrompt times from starting `swmgr cli` to its first
// prompt on the output.
func BenchmarkCLIFirstPrompt(b *testing.B) {
	s := startServer(b, "")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(swmgrBin, "cli", "--socket", filepath.Join(s.dir, "swmgr.sock"))
		in, _ := cmd.StdinPipe()
		outPipe, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		in.Write([]byte("enable\n"))
		r := bufio.NewReader(outPipe)
		line, err := r.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "switch>") {
			b.Fatalf("first line %q: %v", line, err)
		}
		b.StopTimer()
		in.Close()
		cmd.Wait()
		b.StartTimer()
	}
}

// BenchmarkCLIShowBGPSummary1000 times `swmgr cli -c 'show ip bgp
// summary'` (the whole process) with 1,000 BGP neighbours.
func BenchmarkCLIShowBGPSummary1000(b *testing.B) {
	s := startServer(b, "")
	bulk(b, s, 1000, 0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, code := runCLI(b, s, "", "-c", "show ip bgp summary")
		if code != 0 || strings.Count(out, "\n 10.128.") != 1000 {
			b.Fatalf("exit %d, %d neighbours:\n%s", code, strings.Count(out, "\n 10.128."), tail(out, 2000))
		}
	}
}

// BenchmarkCLIShowInterfacesStatus256 times `swmgr cli -c 'show
// interfaces status'` (the whole process) on a switch of 256 ports.
func BenchmarkCLIShowInterfacesStatus256(b *testing.B) {
	s := startServer(b, "", "--ports", "256")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, code := runCLI(b, s, "", "-c", "show interfaces status")
		if code != 0 || strings.Count(out, "\n fpPort") != 256 {
			b.Fatalf("exit %d, %d ports:\n%s", code, strings.Count(out, "\n fpPort"), tail(out, 2000))
		}
	}
}

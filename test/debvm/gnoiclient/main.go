// Command gnoiclient drives gNOI's OS and System services of the swmgr in
// the Debian VM (test/debvm's os.sh and reboot.sh): built statically by
// the test, run in the VM.
//
//	GNOICLIENT_PASSWORD=P gnoiclient [-addr A] [-cert F] [-user U] verify
//	gnoiclient ... install FILE VERSION
//	gnoiclient ... activate VERSION
//	gnoiclient ... reboot DELAY-SECONDS MESSAGE
//	gnoiclient ... reboot-status
//
// verify prints "version=V fail=MESSAGE"; install prints the Validated
// version, or the InstallError; activate prints "ok" or the error; reboot
// (COLD) prints "ok"; reboot-status prints "active=A count=N status=S". It
// exits 1 on any error.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	ospb "github.com/openconfig/gnoi/os"
	spb "github.com/openconfig/gnoi/system"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9339", "swmgr's gNMI address")
	certFile := flag.String("cert", "/var/lib/swmgr/tls-cert.pem", "the certificate swmgr serves (pinned)")
	user := flag.String("user", "osadmin", "user name")
	flag.Parse()
	if err := run(*addr, *certFile, *user, os.Getenv("GNOICLIENT_PASSWORD"), flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "osclient:", err)
		os.Exit(1)
	}
}

func run(addr, certFile, user, password string, args []string) error {
	pem, err := os.ReadFile(certFile)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "username", user, "password", password)
	c := ospb.NewOSClient(conn)
	switch {
	case len(args) == 1 && args[0] == "verify":
		r, err := c.Verify(ctx, &ospb.VerifyRequest{})
		if err != nil {
			return err
		}
		fmt.Printf("version=%s fail=%s\n", r.GetVersion(), r.GetActivationFailMessage())
	case len(args) == 3 && args[0] == "install":
		return install(ctx, c, args[1], args[2])
	case len(args) == 2 && args[0] == "activate":
		r, err := c.Activate(ctx, &ospb.ActivateRequest{Version: args[1]})
		if err != nil {
			return err
		}
		if e := r.GetActivateError(); e != nil {
			return fmt.Errorf("%s: %s", e.GetType(), e.GetDetail())
		}
		fmt.Println("ok")
	case len(args) == 3 && args[0] == "reboot":
		delay, err := strconv.ParseUint(args[1], 10, 32)
		if err != nil {
			return fmt.Errorf("reboot delay %q: %w", args[1], err)
		}
		if _, err := spb.NewSystemClient(conn).Reboot(ctx, &spb.RebootRequest{Method: spb.RebootMethod_COLD, Delay: delay * uint64(time.Second), Message: args[2]}); err != nil {
			return err
		}
		fmt.Println("ok")
	case len(args) == 1 && args[0] == "reboot-status":
		r, err := spb.NewSystemClient(conn).RebootStatus(ctx, &spb.RebootStatusRequest{})
		if err != nil {
			return err
		}
		fmt.Printf("active=%v count=%d status=%s\n", r.GetActive(), r.GetCount(), r.GetStatus().GetStatus())
	default:
		return fmt.Errorf("usage: gnoiclient verify | install FILE VERSION | activate VERSION | reboot DELAY-SECONDS MESSAGE | reboot-status")
	}
	return nil
}

func install(ctx context.Context, c ospb.OSClient, file, version string) error {
	deb, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	st, err := c.Install(ctx)
	if err != nil {
		return err
	}
	// A Send that fails (io.EOF: the stream ended) leaves the status to
	// Recv.
	st.Send(&ospb.InstallRequest{Request: &ospb.InstallRequest_TransferRequest{TransferRequest: &ospb.TransferRequest{Version: version, PackageSize: uint64(len(deb))}}})
	r, err := st.Recv()
	if err != nil {
		return err
	}
	if r.GetTransferReady() != nil {
		for b := deb; len(b) > 0; {
			n := min(len(b), 1<<20)
			if err := st.Send(&ospb.InstallRequest{Request: &ospb.InstallRequest_TransferContent{TransferContent: b[:n]}}); err != nil {
				return err
			}
			b = b[n:]
		}
		if err := st.Send(&ospb.InstallRequest{Request: &ospb.InstallRequest_TransferEnd{TransferEnd: &ospb.TransferEnd{}}}); err != nil {
			return err
		}
		for r.GetValidated() == nil && r.GetInstallError() == nil {
			if r, err = st.Recv(); err == io.EOF {
				return fmt.Errorf("the stream ended without Validated")
			} else if err != nil {
				return err
			}
		}
	}
	if e := r.GetInstallError(); e != nil {
		return fmt.Errorf("%s: %s", e.GetType(), e.GetDetail())
	}
	fmt.Println(r.GetValidated().GetVersion())
	return nil
}

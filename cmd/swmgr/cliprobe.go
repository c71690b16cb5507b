package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"time"

	spb "github.com/openconfig/gnoi/system"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/swmgr/swmgr/internal/cli"
)

// gnoiProber runs the CLI's ping and traceroute on the switch through
// gNOI's System.Ping and Traceroute on its gNMI port, as the CLI's user:
// the switch applies the same bounds, namespace and VRF handling as for
// any gNOI client, and the probe runs there, not where the CLI runs.
type gnoiProber struct {
	sys        spb.SystemClient
	user, pass string
}

// newGNOIProber connects to addr with the TLS settings of the CLI's
// https:// connection (the gNMI port serves the same certificate).
func newGNOIProber(addr string, cfg *tls.Config, user, pass string) (*gnoiProber, *grpc.ClientConn, error) {
	if cfg == nil {
		return nil, nil, errors.New("--gnmi needs --url https://...: gNOI is served over TLS with the HTTPS certificate")
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	if err != nil {
		return nil, nil, fmt.Errorf("--gnmi %s: %w", addr, err)
	}
	return &gnoiProber{sys: spb.NewSystemClient(conn), user: user, pass: pass}, conn, nil
}

// Probe runs r and writes its output in the form of iputils' ping and
// traceroute.
func (p *gnoiProber) Probe(ctx context.Context, r cli.ProbeRequest, out io.Writer) error {
	ctx = metadata.AppendToOutgoingContext(ctx, "username", p.user, "password", p.pass)
	if r.Traceroute {
		return p.traceroute(ctx, r, out)
	}
	st, err := p.sys.Ping(ctx, &spb.PingRequest{Destination: r.Destination, Source: r.Source, Count: int32(r.Count),
		Interval: int64(r.Interval), Size: int32(r.Size), NetworkInstance: r.VRF})
	if err != nil {
		return probeError(err)
	}
	return eachReply(st.Recv, func(m *spb.PingResponse) {
		if m.GetSent() > 0 || m.GetSequence() == 0 {
			loss := 0
			if m.GetSent() > 0 {
				loss = int(100 * (m.GetSent() - m.GetReceived()) / m.GetSent())
			}
			fmt.Fprintf(out, "--- %s ping statistics ---\n%d packets transmitted, %d received, %d%% packet loss, time %dms\n",
				r.Destination, m.GetSent(), m.GetReceived(), loss, time.Duration(m.GetTime()).Milliseconds())
			if m.GetReceived() > 0 {
				fmt.Fprintf(out, "rtt min/avg/max/mdev = %s/%s/%s/%s ms\n", msOf(m.GetMinTime()), msOf(m.GetAvgTime()), msOf(m.GetMaxTime()), msOf(m.GetStdDev()))
			}
			return
		}
		fmt.Fprintf(out, "%d bytes from %s: icmp_seq=%d ttl=%d time=%s ms\n", m.GetBytes(), m.GetSource(), m.GetSequence(), m.GetTtl(), msOf(m.GetTime()))
	})
}

func (p *gnoiProber) traceroute(ctx context.Context, r cli.ProbeRequest, out io.Writer) error {
	st, err := p.sys.Traceroute(ctx, &spb.TracerouteRequest{Destination: r.Destination, Source: r.Source, MaxTtl: int32(r.MaxTTL), NetworkInstance: r.VRF})
	if err != nil {
		return probeError(err)
	}
	return eachReply(st.Recv, func(m *spb.TracerouteResponse) {
		switch {
		case m.GetHop() == 0:
			fmt.Fprintf(out, "traceroute to %s (%s), %d hops max, %d byte packets\n", m.GetDestinationName(), m.GetDestinationAddress(), m.GetHops(), m.GetPacketSize())
		case m.GetAddress() == "":
			fmt.Fprintf(out, "%2d  *\n", m.GetHop())
		default:
			note := ""
			if s := m.GetState(); s != spb.TracerouteResponse_DEFAULT && s != spb.TracerouteResponse_NONE {
				note = " " + s.String()
			}
			fmt.Fprintf(out, "%2d  %s  %s ms%s\n", m.GetHop(), m.GetAddress(), msOf(m.GetRtt()), note)
		}
	})
}

// eachReply hands each reply of a stream to f until the stream ends.
func eachReply[T any](recv func() (T, error), f func(T)) error {
	for {
		m, err := recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return probeError(err)
		}
		f(m)
	}
}

// msOf is nanoseconds as milliseconds with three decimals, as ping prints.
func msOf(ns int64) string { return fmt.Sprintf("%.3f", float64(ns)/1e6) }

// probeError is a gNOI error as the CLI says it: the switch's message.
func probeError(err error) error {
	if s, ok := status.FromError(err); ok {
		return fmt.Errorf("%s (%s)", s.Message(), s.Code())
	}
	return err
}

package frr

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"
)

// vtyConn speaks the protocol vtysh itself uses with each daemon over its
// unix socket: a command is sent NUL-terminated; the reply is the output
// followed by three NULs and the command's status byte. Talking to the
// socket directly costs a few milliseconds where exec'ing vtysh costs
// hundreds on a loaded machine, and no command (passwords included) ever
// appears on a command line or in a temporary file.
type vtyConn struct {
	conn net.Conn
	buf  []byte
}

// dialVty connects to one daemon of this instance, in enable mode.
func (r *Router) dialVty(ctx context.Context, daemon string) (*vtyConn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", filepath.Join(r.opts.Dir, daemon+".vty"))
	if err != nil {
		return nil, fmt.Errorf("frr: connecting to %s: %w", daemon, err)
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(60 * time.Second)
	}
	conn.SetDeadline(deadline)
	c := &vtyConn{conn: conn, buf: make([]byte, 64<<10)}
	if _, err := c.run("enable"); err != nil {
		conn.Close()
		return nil, fmt.Errorf("frr: %s: %w", daemon, err)
	}
	return c, nil
}

func (c *vtyConn) Close() error { return c.conn.Close() }

// run sends one command and returns its output; a non-zero status is an
// error carrying the daemon's message.
func (c *vtyConn) run(cmd string) (string, error) {
	if strings.ContainsAny(cmd, "\x00\n") {
		return "", fmt.Errorf("frr: command contains a NUL or a newline")
	}
	if _, err := c.conn.Write(append([]byte(cmd), 0)); err != nil {
		return "", fmt.Errorf("frr: sending a command: %w", err)
	}
	var out bytes.Buffer
	for {
		n, err := c.conn.Read(c.buf)
		out.Write(c.buf[:n])
		b := out.Bytes()
		if l := len(b); l >= 4 && b[l-4] == 0 && b[l-3] == 0 && b[l-2] == 0 {
			text, status := string(b[:l-4]), b[l-1]
			if status != 0 {
				msg := strings.TrimSpace(text)
				if msg == "" {
					msg = fmt.Sprintf("status %d", status)
				}
				return text, &RejectedError{Command: redact(cmd), Message: redact(msg)}
			}
			return text, nil
		}
		if err != nil {
			return "", fmt.Errorf("frr: reading a reply: %w", err)
		}
	}
}

// RejectedError carries FRR's own message (passwords redacted).
type RejectedError struct{ Command, Message string }

func (e *RejectedError) Error() string {
	return fmt.Sprintf("FRR rejected %q: %s", e.Command, e.Message)
}

// show runs one command on a daemon.
func (r *Router) show(ctx context.Context, daemon, cmd string) (string, error) {
	c, err := r.dialVty(ctx, daemon)
	if err != nil {
		return "", err
	}
	defer c.Close()
	return c.run(cmd)
}

// configure runs bgpd's configuration commands in order and stops at the
// first one FRR refuses.
func (r *Router) configure(ctx context.Context, cmds []string) error {
	return r.configureOn(ctx, "bgpd", cmds)
}

// configureOn is configure on one daemon (zebra holds the VRFs' L3 VNIs,
// bfdd the BFD profiles and peers). The commands are one batch, as vtysh
// sends a file (XFRR_start_configuration ... XFRR_end_configuration):
// FRR's northbound commands (prefix-lists, route-maps) are then committed
// once at the end instead of once each, which a list of 1,000 entries
// needs.
func (r *Router) configureOn(ctx context.Context, daemon string, cmds []string) error {
	c, err := r.dialVty(ctx, daemon)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.run("configure terminal"); err != nil {
		return err
	}
	if _, err := c.run("XFRR_start_configuration"); err != nil {
		return err
	}
	for _, cmd := range cmds {
		if _, err := c.run(noOutputFilter(strings.TrimSpace(cmd))); err != nil {
			// What was entered before is committed: the caller puts
			// the configuration back from what FRR then runs.
			c.run("XFRR_end_configuration")
			c.run("end")
			return err
		}
	}
	if _, err := c.run("XFRR_end_configuration"); err != nil {
		return err
	}
	_, err = c.run("end")
	return err
}

// noOutputFilter keeps FRR's vty from reading a bar followed by a blank as
// an output filter: it cuts the command at "| " and runs the rest as
// `include <regexp>` (or fails on another word), so a BGP neighbor's
// description "uplink | include x" would be stored as "uplink" and
// "uplink | core" refused. The blank after each bar is sent as a tab,
// which FRR's tokenizer splits words at as it does at a blank: the
// command's words, and so what FRR stores and shows ("uplink | core"),
// are the same.
func noOutputFilter(cmd string) string {
	return strings.ReplaceAll(cmd, "| ", "|\t")
}

package aaa

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"

	tq "github.com/facebookincubator/tacquito"

	"github.com/swmgr/swmgr/internal/model"
)

// tacacsServer is one Tacacs object as the client needs it.
type tacacsServer struct {
	host    string // ServerIp
	addr    string // host:port
	secret  []byte
	service tq.AuthenService
	privLvl tq.PrivLvl
	debug   bool
	source  *sourceIntf // nil: the routing table's source address
	nas     nas
}

// remAddr is what a request names as where its user is: the user's
// address when known, else the switch's own (the address its connection
// comes from, SourceIntf's or the routing table's).
func (s tacacsServer) remAddr(ctx context.Context, userAddr string) string {
	if userAddr != "" {
		return userAddr
	}
	if a := s.source.addr(ctx); a != nil {
		return a.IP.String()
	}
	if a := localAddrToward(s.host); a.IsValid() {
		return a.String()
	}
	return s.nas.name
}

var authenServices = map[string]tq.AuthenService{
	"login": tq.AuthenServiceLogin, "enable": tq.AuthenServiceEnable, "ppp": tq.AuthenServicePPP,
	"arap": tq.AuthenServiceARAP, "pt": tq.AuthenServicePT, "rcmd": tq.AuthenServiceRCMD,
	"x25": tq.AuthenServiceX25, "nasi": tq.AuthenServiceNASI, "fwproxy": tq.AuthenServiceFwProxy,
}

// errNoAnswer wraps what kept a server from answering: it could not be
// reached, timed out, or answered with an error status. The next server
// (or method, or the local users) is then tried.
var errNoAnswer = errors.New("no answer")

// errRefused wraps a server's refusal of an accounting record: it
// answered, with an error. The record is not sent to it again (it would
// answer the same); the next server of its method is asked.
var errRefused = errors.New("refused")

// tacacsSession runs one TACACS+ session (RFC 8907: one connection, one
// session, as without single-connect mode) with pkt's body, and returns the
// server's reply body. The connection is bounded by timeout and ctx.
func tacacsSession(ctx context.Context, s tacacsServer, timeout time.Duration, typ tq.HeaderType, body tq.EncoderDecoder) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	local := s.source.addr(ctx)
	if local != nil {
		d.LocalAddr = local
	}
	conn, err := d.DialContext(ctx, "tcp", s.addr)
	if err != nil && local != nil && errors.Is(err, syscall.EADDRNOTAVAIL) {
		// The interface's address is not one this process can send from
		// (swmgr runs in another network namespace than the switch's
		// interfaces): the routing table's, and say so.
		s.source.unusable(local, err)
		d.LocalAddr = nil
		conn, err = d.DialContext(ctx, "tcp", s.addr)
	} else if err == nil && local != nil {
		s.source.used()
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoAnswer, err)
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	c, err := tq.NewClient(tq.SetClientWithConn(conn.(*net.TCPConn), s.secret))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoAnswer, err)
	}
	minor := uint8(tq.MinorVersionDefault)
	if typ == tq.Authenticate {
		minor = tq.MinorVersionOne // PAP
	}
	p := tq.NewPacket(
		tq.SetPacketHeader(tq.NewHeader(
			tq.SetHeaderVersion(tq.Version{MajorVersion: tq.MajorVersion, MinorVersion: minor}),
			tq.SetHeaderType(typ),
			tq.SetHeaderRandomSessionID(),
		)),
		tq.SetPacketBodyUnsafe(body),
	)
	resp, err := c.Send(p)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoAnswer, err)
	}
	return resp.Body, nil
}

// tacacsMethod is the tacacs+ method: servers in their order, each
// taking accounting records; each login exchange counted in
// NumActiveSessions and, when its server's Debug is 1, logged; OperStatus
// UP when one answered a login, DOWN when none did.
func (s *Service) tacacsMethod(servers []tacacsServer, timeout time.Duration) method {
	m := method{name: "tacacs+", kind: "Tacacs", answered: func(ok bool) {
		if ok {
			s.setTacacsUp("UP")
		} else {
			s.setTacacsUp("DOWN")
		}
	}}
	for _, srv := range servers {
		m.servers = append(m.servers, methodServer{key: srv.host, addr: srv.addr, acctAddr: srv.addr,
			check: func(ctx context.Context, name, password, remAddr string) (string, bool, error) {
				s.active.Add(1)
				start := time.Now()
				role, ok, err := tacacsLogin(ctx, srv, timeout, name, password, remAddr)
				s.active.Add(-1)
				if srv.debug {
					s.o.Log.Info("TACACS+ login exchange", "server", srv.addr, "user", name, "ok", ok, "role", role, "err", err, "took", time.Since(start))
				}
				return role, ok, err
			},
			account: func(ctx context.Context, r Record) error { return tacacsAccount(ctx, srv, timeout, r) },
		})
	}
	return m
}

// tacacsLogin checks a password with PAP, then asks for the shell
// authorization that carries the user's priv-lvl. ok false with a nil
// error is the server's no.
func tacacsLogin(ctx context.Context, s tacacsServer, timeout time.Duration, name, password, remAddr string) (role string, ok bool, err error) {
	reply, err := tacacsSession(ctx, s, timeout, tq.Authenticate, tq.NewAuthenStart(
		tq.SetAuthenStartType(tq.AuthenTypePAP),
		tq.SetAuthenStartAction(tq.AuthenActionLogin),
		tq.SetAuthenStartService(s.service),
		tq.SetAuthenStartPrivLvl(s.privLvl),
		tq.SetAuthenStartPort(tq.AuthenPort(s.nas.name)),
		tq.SetAuthenStartRemAddr(tq.AuthenRemAddr(remAddr)),
		tq.SetAuthenStartUser(tq.AuthenUser(name)),
		tq.SetAuthenStartData(tq.AuthenData(password)),
	))
	if err != nil {
		return "", false, err
	}
	var ar tq.AuthenReply
	if err := tq.Unmarshal(reply, &ar); err != nil {
		return "", false, fmt.Errorf("%w: authentication reply: %v (is the secret the server's?)", errNoAnswer, err)
	}
	switch ar.Status {
	case tq.AuthenStatusPass:
	case tq.AuthenStatusFail:
		return "", false, nil
	default:
		return "", false, fmt.Errorf("%w: authentication status %v %s", errNoAnswer, ar.Status, ar.ServerMsg)
	}
	reply, err = tacacsSession(ctx, s, timeout, tq.Authorize, tq.NewAuthorRequest(
		tq.SetAuthorRequestMethod(tq.AuthenMethodTacacsPlus),
		tq.SetAuthorRequestPrivLvl(s.privLvl),
		tq.SetAuthorRequestType(tq.AuthenTypePAP),
		tq.SetAuthorRequestService(s.service),
		tq.SetAuthorRequestPort(tq.AuthenPort(s.nas.name)),
		tq.SetAuthorRequestRemAddr(tq.AuthenRemAddr(remAddr)),
		tq.SetAuthorRequestUser(tq.AuthenUser(name)),
		tq.SetAuthorRequestArgs(tq.Args{"service=shell", "cmd="}),
	))
	if err != nil {
		// Authenticated, but the role could not be asked: the least.
		return RoleReadOnly, true, nil
	}
	var az tq.AuthorReply
	if err := tq.Unmarshal(reply, &az); err != nil {
		return RoleReadOnly, true, nil
	}
	if az.Status != tq.AuthorStatusPassAdd && az.Status != tq.AuthorStatusPassRepl {
		return RoleReadOnly, true, nil
	}
	args := make([]string, len(az.Args))
	for i, a := range az.Args {
		args[i] = string(a)
	}
	return TacacsRole(args), true, nil
}

// TacacsRole maps the attribute-value pairs of a TACACS+ shell
// authorization to a role: swmgr-role=admin|operator|read-only if the
// server sends it, else priv-lvl 15 admin, 7..14 operator, anything else
// (or nothing) read-only.
func TacacsRole(args []string) string {
	lvl := -1
	for _, a := range args {
		name, value, ok := cutAV(a)
		if !ok {
			continue
		}
		switch name {
		case "swmgr-role":
			if r := roleName(value); r != "" {
				return r
			}
		case "priv-lvl":
			if n, err := strconv.Atoi(value); err == nil {
				lvl = n
			}
		}
	}
	switch {
	case lvl >= 15:
		return RoleAdmin
	case lvl >= 7:
		return RoleOperator
	}
	return RoleReadOnly
}

// cutAV splits an RFC 8907 argument, name=value (mandatory) or
// name*value (optional).
func cutAV(a string) (name, value string, ok bool) {
	i := strings.IndexAny(a, "=*")
	if i < 0 {
		return "", "", false
	}
	return a[:i], a[i+1:], true
}

// tacacsAccount sends one accounting record (a STOP: the commit is done).
func tacacsAccount(ctx context.Context, s tacacsServer, timeout time.Duration, r Record) error {
	args := tq.Args{
		tq.Arg("task_id=" + s.nas.sessionID(r)),
		tq.Arg("service=shell"),
		tq.Arg("start_time=" + strconv.FormatInt(r.Time.Unix(), 10)),
		tq.Arg("stop_time=" + strconv.FormatInt(r.Time.Unix(), 10)),
		tq.Arg("cmd=" + model.Truncate(r.Command(), 200)),
	}
	if r.Context != "" {
		args = append(args, tq.Arg("swmgr-context="+model.Truncate(r.Context, 200)))
	}
	remAddr := s.remAddr(ctx, r.Addr)
	reply, err := tacacsSession(ctx, s, timeout, tq.Accounting, tq.NewAcctRequest(
		tq.SetAcctRequestFlag(tq.AcctFlagStop),
		tq.SetAcctRequestMethod(tq.AuthenMethodTacacsPlus),
		tq.SetAcctRequestPrivLvl(s.privLvl),
		tq.SetAcctRequestType(tq.AuthenTypePAP),
		tq.SetAcctRequestService(s.service),
		tq.SetAcctRequestUser(tq.AuthenUser(r.User)),
		tq.SetAcctRequestPort(tq.AuthenPort(s.nas.name)),
		tq.SetAcctRequestRemAddr(tq.AuthenRemAddr(remAddr)),
		tq.SetAcctRequestArgs(args),
	))
	if err != nil {
		return err
	}
	var rep tq.AcctReply
	if err := tq.Unmarshal(reply, &rep); err != nil {
		// The same key would not read it the next time either.
		return fmt.Errorf("%w: accounting reply: %v (is the secret the server's?)", errRefused, err)
	}
	if rep.Status != tq.AcctReplyStatusSuccess {
		return fmt.Errorf("%w: accounting status %v %s", errRefused, rep.Status, rep.ServerMsg)
	}
	return nil
}

package aaa

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2866"
	"layeh.com/radius/rfc3162"

	"github.com/swmgr/swmgr/internal/model"
)

// radiusServer is one RadiusServer object as the client needs it.
type radiusServer struct {
	host     string
	port     int
	acctPort int // 0: no accounting
	secret   []byte
	timeout  time.Duration
	retries  int
	priority int64
	nas      nas
}

// identify names the switch in p: NAS-Identifier its host name,
// NAS-IP-Address (or NAS-IPv6-Address) the address it sends from to the
// server.
func (s radiusServer) identify(p *radius.Packet) {
	rfc2865.NASIdentifier_SetString(p, s.nas.name)
	switch a := localAddrToward(s.host); {
	case a.Is4():
		rfc2865.NASIPAddress_Set(p, a.AsSlice())
	case a.Is6():
		rfc3162.NASIPv6Address_Set(p, a.AsSlice())
	}
}

// exchange sends p and waits for the answer: Timeout per attempt, Retries
// more attempts (the same packet again, as RFC 2865 section 2.5 wants).
func (s radiusServer) exchange(ctx context.Context, p *radius.Packet, port int) (*radius.Packet, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout*time.Duration(s.retries+1))
	defer cancel()
	c := radius.Client{Retry: s.timeout, MaxPacketErrors: 10}
	resp, err := c.Exchange(ctx, p, net.JoinHostPort(s.host, strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoAnswer, err)
	}
	return resp, nil
}

// radiusMethod is the radius method: servers in their order, those with
// an AcctPort taking accounting records.
func radiusMethod(servers []radiusServer) method {
	m := method{name: "radius", kind: "RadiusServer"}
	for _, srv := range servers {
		ms := methodServer{key: srv.host, addr: net.JoinHostPort(srv.host, strconv.Itoa(srv.port)),
			check: func(ctx context.Context, name, password, remAddr string) (string, bool, error) {
				return radiusLogin(ctx, srv, name, password, remAddr)
			},
		}
		if srv.acctPort != 0 {
			ms.acctAddr = net.JoinHostPort(srv.host, strconv.Itoa(srv.acctPort))
			ms.account = func(ctx context.Context, r Record) error { return radiusAccount(ctx, srv, r) }
		}
		m.servers = append(m.servers, ms)
	}
	return m
}

// radiusLogin sends an Access-Request with the password (PAP, hidden
// with the shared secret as RFC 2865 section 5.2 says). ok false with a
// nil error is an Access-Reject.
func radiusLogin(ctx context.Context, s radiusServer, name, password, remAddr string) (role string, ok bool, err error) {
	p := radius.New(radius.CodeAccessRequest, s.secret)
	if err := rfc2865.UserName_SetString(p, name); err != nil {
		return "", false, err
	}
	if err := rfc2865.UserPassword_SetString(p, password); err != nil {
		return "", false, err
	}
	s.identify(p)
	rfc2865.NASPortType_Set(p, rfc2865.NASPortType_Value_Virtual)
	if remAddr != "" {
		rfc2865.CallingStationID_SetString(p, remAddr)
	}
	resp, err := s.exchange(ctx, p, s.port)
	if err != nil {
		return "", false, err
	}
	switch resp.Code {
	case radius.CodeAccessAccept:
		return RadiusRole(resp), true, nil
	case radius.CodeAccessReject:
		return "", false, nil
	}
	// An Access-Challenge asks for more than a password: no login here.
	return "", false, nil
}

// RadiusRole maps an Access-Accept to a role: a Filter-Id of admin,
// operator or read-only (or swmgr-admin, swmgr-operator,
// swmgr-read-only) if there is one; else Service-Type
// Administrative-User admin, NAS-Prompt-User operator; anything else (or
// nothing) read-only.
func RadiusRole(p *radius.Packet) string {
	if ids, err := rfc2865.FilterID_GetStrings(p); err == nil {
		for _, id := range ids {
			if r := roleName(strings.TrimPrefix(id, "swmgr-")); r != "" {
				return r
			}
		}
	}
	switch rfc2865.ServiceType_Get(p) {
	case rfc2865.ServiceType_Value_AdministrativeUser:
		return RoleAdmin
	case rfc2865.ServiceType_Value_NASPromptUser:
		return RoleOperator
	}
	return RoleReadOnly
}

// radiusAccount sends one Accounting-Request (RFC 2866) of status Stop.
func radiusAccount(ctx context.Context, s radiusServer, r Record) error {
	p := radius.New(radius.CodeAccountingRequest, s.secret)
	rfc2866.AcctStatusType_Set(p, rfc2866.AcctStatusType_Value_Stop)
	rfc2865.UserName_SetString(p, r.User)
	s.identify(p)
	rfc2866.AcctSessionID_SetString(p, "swmgr-"+s.nas.sessionID(r))
	// The commit or the command line itself, as the record of what was done.
	rfc2865.ReplyMessage_SetString(p, model.Truncate(r.Command(), 250))
	if r.Line != "" {
		// Where command accounting collectors look for the command: the
		// cisco-avpair shell:cmd (vendor 9, attribute 1).
		p.Add(rfc2865.VendorSpecific_Type, ciscoAVPair("shell:cmd="+model.Truncate(r.Line, 240)))
		if r.Addr != "" {
			rfc2865.CallingStationID_SetString(p, r.Addr)
		}
	}
	rfc2866.AcctDelayTime_Set(p, rfc2866.AcctDelayTime(max(0, time.Since(r.Time)/time.Second)))
	resp, err := s.exchange(ctx, p, s.acctPort)
	if err != nil {
		return err
	}
	if resp.Code != radius.CodeAccountingResponse {
		return fmt.Errorf("%w: answered %v", errRefused, resp.Code)
	}
	return nil
}

// ciscoAVPair is a Vendor-Specific attribute (RFC 2865 section 5.26) of
// vendor 9, type 1: the cisco-avpair "name=value" that command accounting
// collectors read.
func ciscoAVPair(v string) radius.Attribute {
	a := make([]byte, 0, 6+len(v))
	a = append(a, 0, 0, 0, 9, 1, byte(2+len(v)))
	return append(a, v...)
}

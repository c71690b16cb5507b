package test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// sdkScript makes the FlexSwitch Python SDK's calls the way it makes them
// (python-requests, no credentials on http://127.0.0.1:8080, its default
// headers, the misspelt Content-Type on PATCH, key bodies on GET and
// DELETE, its paging loop), written from the SDK's documented behaviour
// (reference/flexswitch-notes.md), not copied from it.
const sdkScript = `
import json, sys, requests
base = sys.argv[1]
ok = [200, 201, 202, 204]
hdr = {'Accept': 'application/json', 'Content-Type': 'application/json'}
patchhdr = {'Conent-Type': 'application/json-patch+json', 'Accept': 'application/json'}
def check(r, what):
    if r.status_code not in ok:
        sys.exit('%s: %d %s' % (what, r.status_code, r.text))
    return r.json()
for i in range(1, 4):
    obj = {'IpAddr': '192.0.2.%d' % i, 'MinPoll': 6, 'MaxPoll': 10, 'SourceIntf': 'ma1', 'Prefer': False}
    check(requests.post(base + '/config/NtpServer', data=json.dumps(obj), headers=hdr, timeout=15), 'create')
got = check(requests.get(base + '/config/NtpServer', data=json.dumps({'IpAddr': '192.0.2.1'}), headers=hdr, timeout=15), 'get')
oid = got['ObjectId']
check(requests.patch(base + '/config/NtpServer', data=json.dumps({'IpAddr': '192.0.2.1', 'MinPoll': 5}), headers=patchhdr, timeout=15), 'update')
check(requests.patch(base + '/config/NtpServer/' + oid, data=json.dumps({'MaxPoll': 11}), headers=patchhdr, timeout=15), 'update by id')
objs, c = [], 0
while True:
    r = check(requests.get(base + '/config/NtpServers?CurrentMarker=%d&NextMarker=%d&Count=2' % (c, c), headers=hdr, timeout=15), 'get all')
    objs += r['Objects']
    if not r['MoreExist']:
        break
    c = r['NextMarker']
if len(objs) != 3:
    sys.exit('get all: %d objects' % len(objs))
check(requests.get(base + '/state/SystemParams', headers=hdr, timeout=15), 'state')
check(requests.delete(base + '/config/NtpServer', data=json.dumps({'IpAddr': '192.0.2.2'}), headers=hdr, timeout=15), 'delete')
check(requests.delete(base + '/config/NtpServer/' + oid, headers=hdr, timeout=15), 'delete by id')
got = check(requests.get(base + '/config/NtpServer', data=json.dumps({'IpAddr': '192.0.2.3'}), headers=hdr, timeout=15), 'get')
print('OK')
`

// The FlexSwitch SDK's calls, as root without credentials over loopback
// HTTP, still work with peer identity, cross-origin protection and the
// Host check in place.
func TestFlexSwitchSDKCalls(t *testing.T) {
	if err := exec.Command("python3", "-c", "import requests").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("python3 with requests is missing (.ci/run installs python3-requests): %v", err)
		}
		t.Skipf("needs python3 with requests (CI installs python3-requests): %v", err)
	}
	s := startServer(t, "")
	for _, base := range []string{s.base, strings.Replace(s.base, "127.0.0.1", "localhost", 1)} {
		out, err := exec.Command("python3", "-c", sdkScript, base).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "OK" {
			t.Fatalf("SDK calls on %s: %v\n%s", base, err, out)
		}
		s.expect(t, 200, "DELETE", "/config/NtpServer?IpAddr=192.0.2.3", "")
	}
}

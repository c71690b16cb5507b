package gnoi

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	fpb "github.com/openconfig/gnoi/file"
	"github.com/openconfig/gnoi/types"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/swmgr/swmgr/internal/atomicfile"
)

// DefaultMaxFile bounds a file Put writes and Get reads.
const DefaultMaxFile = 64 << 20

// chunk is the size of a Get's content messages (and of the debug bundle's):
// 512 KiB reads 50 MB at 73 MB/s here against 55 MB/s in 64 KiB messages
// (BenchmarkGNOIFileGet50MB).
const chunk = 512 << 10

// maxStatEntries bounds the entries one Stat of a directory lists.
const maxStatEntries = 10000

// Area is a directory File reaches, as /<Name>/<path> (a File path's first
// element names its area; nothing else is reachable).
type Area struct {
	Name string
	Dir  string
	// Write allows Put and Remove (else Get and Stat only).
	Write bool
	// Flat: files directly in Dir only, no subdirectory.
	Flat bool
	// Refuse says why a name (relative to Dir) is not served, "" when it
	// is: swmgr's own files in the data directory.
	Refuse func(name string) string
}

// files are the areas, each opened as an os.Root: a path, a symbolic
// link or a ".." that would leave its directory is refused by the kernel
// walk os.Root does, not by a check of the name alone.
type files struct {
	areas []*area
	max   int64
}

type area struct {
	Area
	root *os.Root
}

func newFiles(areas []Area, max int64) (*files, error) {
	fs := &files{max: max}
	for _, a := range areas {
		if a.Name == "" || strings.ContainsAny(a.Name, "/.") {
			return nil, fmt.Errorf("gnoi: area name %q", a.Name)
		}
		if err := os.MkdirAll(a.Dir, 0o750); err != nil {
			return nil, fmt.Errorf("gnoi: area %s: %w", a.Name, err)
		}
		root, err := os.OpenRoot(a.Dir)
		if err != nil {
			return nil, fmt.Errorf("gnoi: area %s: %w", a.Name, err)
		}
		fs.areas = append(fs.areas, &area{Area: a, root: root})
	}
	return fs, nil
}

// names lists the areas, for messages.
func (fs *files) names() string {
	var n []string
	for _, a := range fs.areas {
		n = append(n, "/"+a.Name)
	}
	if len(n) == 0 {
		return "none"
	}
	return strings.Join(n, ", ")
}

// resolve finds p's area and its name in it ("." for the area itself).
// p is absolute; no element may be "", "." or "..".
func (fs *files) resolve(p string) (*area, string, error) {
	if !strings.HasPrefix(p, "/") {
		return nil, "", invalid("path %q: give an absolute path in one of %s", p, fs.names())
	}
	elems := strings.Split(strings.TrimSuffix(p[1:], "/"), "/")
	for _, e := range elems {
		if e == "" || e == "." || e == ".." || strings.ContainsRune(e, 0) {
			return nil, "", invalid("path %q: no empty, \".\" or \"..\" element is accepted", p)
		}
	}
	for _, a := range fs.areas {
		if a.Name != elems[0] {
			continue
		}
		rel := path.Join(elems[1:]...)
		if rel == "" {
			return a, ".", nil
		}
		if a.Flat && len(elems) > 2 {
			return nil, "", status.Errorf(codes.PermissionDenied, "path %q: /%s has no subdirectories", p, a.Name)
		}
		if a.Refuse != nil {
			if why := a.Refuse(rel); why != "" {
				return nil, "", status.Errorf(codes.PermissionDenied, "path %q is %s: not served", p, why)
			}
		}
		return a, rel, nil
	}
	return nil, "", status.Errorf(codes.PermissionDenied, "path %q is outside the directories File serves (%s)", p, fs.names())
}

// fileError maps an error of an os.Root operation on p to its status.
func fileError(p string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return status.Errorf(codes.NotFound, "%s: no such file", p)
	case errors.Is(err, fs.ErrPermission):
		return status.Errorf(codes.PermissionDenied, "%s: %v", p, err)
	case strings.Contains(err.Error(), "path escapes from parent"):
		return status.Errorf(codes.PermissionDenied, "%s: a symbolic link leads outside its directory", p)
	}
	return status.Errorf(codes.Internal, "%s: %v", p, err)
}

// fileServer is File.
type fileServer struct {
	fpb.UnimplementedFileServer
	s *Server
}

// Get streams a regular file of an area, then its SHA-256.
func (f fileServer) Get(r *fpb.GetRequest, stream fpb.File_GetServer) error {
	a, rel, err := f.s.files.resolve(r.GetRemoteFile())
	if err != nil {
		return err
	}
	file, err := a.root.Open(rel)
	if err != nil {
		return fileError(r.GetRemoteFile(), err)
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return fileError(r.GetRemoteFile(), err)
	}
	if !fi.Mode().IsRegular() {
		return invalid("%s is not a regular file", r.GetRemoteFile())
	}
	if fi.Size() > f.s.files.max {
		return status.Errorf(codes.ResourceExhausted, "%s is %d bytes: more than the %d File serves", r.GetRemoteFile(), fi.Size(), f.s.files.max)
	}
	h := sha256.New()
	buf := make([]byte, chunk)
	var sent int64
	for {
		n, err := file.Read(buf)
		if n > 0 {
			sent += int64(n)
			if sent > f.s.files.max {
				return status.Errorf(codes.ResourceExhausted, "%s grew past the %d bytes File serves", r.GetRemoteFile(), f.s.files.max)
			}
			h.Write(buf[:n])
			if err := stream.Send(&fpb.GetResponse{Response: &fpb.GetResponse_Contents{Contents: buf[:n]}}); err != nil {
				return err
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return fileError(r.GetRemoteFile(), err)
		}
	}
	return stream.Send(&fpb.GetResponse{Response: &fpb.GetResponse_Hash{Hash: &types.HashType{Method: types.HashType_SHA256, Hash: h.Sum(nil)}}})
}

// Put writes a file of a writable area: open, contents, then the hash of
// the contents, checked before the file replaces any of its name
// (written to a hidden name, synced, renamed, its directory synced).
func (f fileServer) Put(stream fpb.File_PutServer) error {
	ctx := stream.Context()
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	open := first.GetOpen()
	if open == nil {
		err := invalid("the first PutRequest must be open, naming the file")
		f.s.record(ctx, "Put", nil, err)
		return err
	}
	size, err := f.put(ctx, open.GetRemoteFile(), stream)
	f.s.record(ctx, "Put", map[string]any{"remote_file": open.GetRemoteFile(), "size": size}, err)
	if err != nil {
		return err
	}
	return stream.SendAndClose(&fpb.PutResponse{})
}

func newHash(m types.HashType_HashMethod) hash.Hash {
	switch m {
	case types.HashType_SHA256:
		return sha256.New()
	case types.HashType_SHA512:
		return sha512.New()
	case types.HashType_MD5:
		return md5.New()
	}
	return nil
}

func (f fileServer) put(ctx context.Context, p string, stream fpb.File_PutServer) (int64, error) {
	a, rel, err := f.s.files.resolve(p)
	if err != nil {
		return 0, err
	}
	if !a.Write {
		return 0, status.Errorf(codes.PermissionDenied, "%s: /%s is read-only", p, a.Name)
	}
	if rel == "." {
		return 0, invalid("%s names a directory, not a file", p)
	}
	dir, name := path.Split(rel)
	if dir != "" {
		if err := a.root.MkdirAll(dir, 0o750); err != nil {
			return 0, fileError(p, err)
		}
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := path.Join(dir, "."+name+".put-"+hex.EncodeToString(rnd[:]))
	out, err := a.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, fileError(p, err)
	}
	kept := false
	defer func() {
		out.Close()
		if !kept {
			a.root.Remove(tmp)
		}
	}()
	hashes := map[types.HashType_HashMethod]hash.Hash{}
	for _, m := range []types.HashType_HashMethod{types.HashType_SHA256, types.HashType_SHA512, types.HashType_MD5} {
		hashes[m] = newHash(m)
	}
	var size int64
	for {
		req, err := stream.Recv()
		if err == io.EOF {
			return size, invalid("%s: the stream ended without the hash of the contents", p)
		}
		if err != nil {
			return size, err
		}
		if c := req.GetContents(); c != nil || req.GetRequest() == nil {
			size += int64(len(c))
			if size > f.s.files.max {
				return size, status.Errorf(codes.ResourceExhausted, "%s: more than the %d bytes a Put may write", p, f.s.files.max)
			}
			if _, err := out.Write(c); err != nil {
				return size, fileError(p, err)
			}
			for _, h := range hashes {
				h.Write(c)
			}
			continue
		}
		if req.GetOpen() != nil {
			return size, invalid("%s: open again after the contents began", p)
		}
		want := req.GetHash()
		h := hashes[want.GetMethod()]
		if h == nil {
			return size, invalid("%s: hash method %s: use SHA256, SHA512 or MD5", p, want.GetMethod())
		}
		if got := h.Sum(nil); string(got) != string(want.GetHash()) {
			return size, status.Errorf(codes.DataLoss, "%s: the contents' %s is %x, not the %x given: nothing written", p, want.GetMethod(), got, want.GetHash())
		}
		break
	}
	if err := ctx.Err(); err != nil {
		return size, status.FromContextError(err).Err()
	}
	if err := out.Sync(); err != nil {
		return size, fileError(p, err)
	}
	if err := a.root.Rename(tmp, rel); err != nil {
		return size, fileError(p, err)
	}
	kept = true
	if err := atomicfile.SyncDir(filepath.Join(a.Dir, dir)); err != nil {
		return size, fileError(p, err)
	}
	return size, nil
}

// Stat describes a file, or a directory's entries (the areas for "/").
func (f fileServer) Stat(ctx context.Context, r *fpb.StatRequest) (*fpb.StatResponse, error) {
	p := r.GetPath()
	if p == "/" {
		out := &fpb.StatResponse{}
		for _, a := range f.s.files.areas {
			if fi, err := a.root.Stat("."); err == nil {
				out.Stats = append(out.Stats, statInfo("/"+a.Name, fi))
			}
		}
		return out, nil
	}
	a, rel, err := f.s.files.resolve(p)
	if err != nil {
		return nil, err
	}
	fi, err := a.root.Stat(rel)
	if err != nil {
		return nil, fileError(p, err)
	}
	if !fi.IsDir() {
		return &fpb.StatResponse{Stats: []*fpb.StatInfo{statInfo(p, fi)}}, nil
	}
	d, err := a.root.Open(rel)
	if err != nil {
		return nil, fileError(p, err)
	}
	defer d.Close()
	entries, err := d.ReadDir(maxStatEntries + 1)
	if err != nil && err != io.EOF {
		return nil, fileError(p, err)
	}
	if len(entries) > maxStatEntries {
		return nil, status.Errorf(codes.ResourceExhausted, "%s has more than %d entries", p, maxStatEntries)
	}
	out := &fpb.StatResponse{}
	for _, e := range entries {
		name := path.Join(rel, e.Name())
		if a.Refuse != nil && a.Refuse(name) != "" || a.Flat && e.IsDir() {
			continue
		}
		if fi, err := e.Info(); err == nil {
			out.Stats = append(out.Stats, statInfo(path.Join("/", a.Name, name), fi))
		}
	}
	return out, nil
}

func statInfo(p string, fi fs.FileInfo) *fpb.StatInfo {
	return &fpb.StatInfo{Path: p, LastModified: uint64(fi.ModTime().UnixNano()), Permissions: uint32(fi.Mode().Perm()), Size: uint64(fi.Size()), Umask: 0o022}
}

// Remove removes a file of a writable area.
func (f fileServer) Remove(ctx context.Context, r *fpb.RemoveRequest) (*fpb.RemoveResponse, error) {
	err := f.remove(r.GetRemoteFile())
	f.s.record(ctx, "Remove", map[string]any{"remote_file": r.GetRemoteFile()}, err)
	if err != nil {
		return nil, err
	}
	return &fpb.RemoveResponse{}, nil
}

func (f fileServer) remove(p string) error {
	a, rel, err := f.s.files.resolve(p)
	if err != nil {
		return err
	}
	if !a.Write {
		return status.Errorf(codes.PermissionDenied, "%s: /%s is read-only", p, a.Name)
	}
	fi, err := a.root.Lstat(rel)
	if err != nil {
		return fileError(p, err)
	}
	if fi.IsDir() {
		return invalid("%s is a directory: Remove removes files", p)
	}
	if err := a.root.Remove(rel); err != nil {
		return fileError(p, err)
	}
	return nil
}

// TransferToRemote is not served: swmgr's archive (ConfigArchiveServer)
// copies saved configurations to SFTP servers.
func (f fileServer) TransferToRemote(context.Context, *fpb.TransferToRemoteRequest) (*fpb.TransferToRemoteResponse, error) {
	return nil, status.Error(codes.Unimplemented, "TransferToRemote: use ConfigArchiveServer (SFTP) to copy saved configurations off the switch")
}

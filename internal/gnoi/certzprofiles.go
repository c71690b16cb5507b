package gnoi

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"

	cpb "github.com/openconfig/gnsi/certz"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// profileName is what a profile other than the default may be called (a
// directory's name).
var profileName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// Names of a profile's files in its directory.
const (
	profileCert = "cert.pem"
	profileKey  = "key.pem"
	profileCA   = "ca.pem"
	profileCRL  = "crl.pem"
)

// profileFiles are profile id's files: the listeners' for the default
// profile, else those of its directory. An empty id is InvalidArgument,
// an unknown one NotFound.
func (c *certzServer) profileFiles(id string) (CertFiles, error) {
	switch {
	case id == "":
		return CertFiles{}, invalid("ssl_profile_id is required; the listeners' profile is %q", Profile)
	case id == Profile:
		return c.files, nil
	case c.profiles == "" || !profileName.MatchString(id):
		return CertFiles{}, status.Errorf(codes.NotFound, "SSL profile %q: there is none", id)
	}
	dir := filepath.Join(c.profiles, id)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return CertFiles{}, status.Errorf(codes.NotFound, "SSL profile %q: there is none", id)
	}
	return CertFiles{Cert: filepath.Join(dir, profileCert), Key: filepath.Join(dir, profileKey), CA: filepath.Join(dir, profileCA), CRL: filepath.Join(dir, profileCRL)}, nil
}

// copyEntity puts an entity of another profile into the upload, as it is
// there; a profile without one (an empty file) is FailedPrecondition.
func (c *certzServer) copyEntity(e *cpb.ExistingEntity, up *upload, once func(*bool, string) error) error {
	from, err := c.profileFiles(e.GetSslProfileId())
	if err != nil {
		return err
	}
	read := func(path, what string) ([]byte, error) {
		b := readOrEmpty(path)
		if path == "" || len(b) == 0 {
			return nil, status.Errorf(codes.FailedPrecondition, "SSL profile %q has no %s to copy", e.GetSslProfileId(), what)
		}
		return b, nil
	}
	switch e.GetEntityType() {
	case cpb.ExistingEntity_ENTITY_TYPE_CERTIFICATE_CHAIN:
		if err := once(&up.hasCert, "certificate_chain"); err != nil {
			return err
		}
		if up.certPEM, err = read(from.Cert, "certificate"); err != nil {
			return err
		}
		up.keyPEM, err = read(from.Key, "key")
		return err
	case cpb.ExistingEntity_ENTITY_TYPE_TRUST_BUNDLE:
		if err := once(&up.hasCA, "trust bundle"); err != nil {
			return err
		}
		up.caPEM, err = read(from.CA, "trust bundle")
		return err
	case cpb.ExistingEntity_ENTITY_TYPE_CERTIFICATE_REVOCATION_LIST_BUNDLE:
		if err := once(&up.hasCRL, "certificate_revocation_list_bundle"); err != nil {
			return err
		}
		up.crlPEM, err = read(from.CRL, "revocation lists")
		return err
	case cpb.ExistingEntity_ENTITY_TYPE_AUTHENTICATION_POLICY:
		return status.Error(codes.Unimplemented, "authentication policies: swmgr keeps none")
	}
	return invalid("existing_entity: entity_type %s", e.GetEntityType())
}

// GetProfileList lists the default profile, then the others by name.
func (c *certzServer) GetProfileList(context.Context, *cpb.GetProfileListRequest) (*cpb.GetProfileListResponse, error) {
	ids := []string{Profile}
	if c.profiles != "" {
		ents, err := os.ReadDir(c.profiles)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, status.Errorf(codes.Internal, "profiles: %v", err)
		}
		for _, e := range ents {
			if e.IsDir() && profileName.MatchString(e.Name()) {
				ids = append(ids, e.Name())
			}
		}
	}
	slices.Sort(ids[1:])
	return &cpb.GetProfileListResponse{SslProfileIds: ids}, nil
}

// AddProfile makes an empty profile: credentials kept on the switch that
// no listener uses, rotated like the default one and copied into it with
// existing_entity.
func (c *certzServer) AddProfile(ctx context.Context, r *cpb.AddProfileRequest) (*cpb.AddProfileResponse, error) {
	err := c.addProfile(r.GetSslProfileId())
	c.s.record(ctx, "AddProfile", map[string]any{"profile": r.GetSslProfileId()}, err)
	if err != nil {
		return nil, err
	}
	return &cpb.AddProfileResponse{}, nil
}

func (c *certzServer) addProfile(id string) error {
	if c.profiles == "" {
		return status.Error(codes.Unimplemented, "this swmgr keeps no profiles but the listeners'")
	}
	if !c.mu.TryLock() {
		return status.Error(codes.Unavailable, "another certz change is in progress; try again when it ends")
	}
	defer c.mu.Unlock()
	switch {
	case id == Profile:
		return status.Errorf(codes.AlreadyExists, "SSL profile %q is the listeners'", id)
	case !profileName.MatchString(id):
		return invalid("ssl_profile_id %q: letters, digits, '.', '_' and '-', up to 64", id)
	}
	if err := os.MkdirAll(c.profiles, 0o700); err != nil {
		return status.Errorf(codes.Internal, "profiles: %v", err)
	}
	if err := os.Mkdir(filepath.Join(c.profiles, id), 0o700); errors.Is(err, os.ErrExist) {
		return status.Errorf(codes.AlreadyExists, "SSL profile %q exists", id)
	} else if err != nil {
		return status.Errorf(codes.Internal, "profile %q: %v", id, err)
	}
	return nil
}

// DeleteProfile removes a profile and its files; the default profile
// cannot be (FailedPrecondition).
func (c *certzServer) DeleteProfile(ctx context.Context, r *cpb.DeleteProfileRequest) (*cpb.DeleteProfileResponse, error) {
	err := c.deleteProfile(r.GetSslProfileId())
	c.s.record(ctx, "DeleteProfile", map[string]any{"profile": r.GetSslProfileId()}, err)
	if err != nil {
		return nil, err
	}
	return &cpb.DeleteProfileResponse{}, nil
}

func (c *certzServer) deleteProfile(id string) error {
	if id == Profile {
		return status.Errorf(codes.FailedPrecondition, "SSL profile %q is the listeners': it cannot be deleted", id)
	}
	if !c.mu.TryLock() {
		return status.Error(codes.Unavailable, "another certz change is in progress; try again when it ends")
	}
	defer c.mu.Unlock()
	files, err := c.profileFiles(id)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(filepath.Dir(files.Cert)); err != nil {
		return status.Errorf(codes.Internal, "profile %q: %v", id, err)
	}
	return nil
}

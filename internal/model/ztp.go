package model

// Zero-touch provisioning (ZTP): a switch with no configuration asks DHCP
// where its configuration is, fetches, verifies and applies it as one
// confirmed commit (docs/ztp.md). Its progress is state the service fills.
// Re-arming it is an admin's action: it may replace the configuration.
func ztpKinds() []*Kind {
	return []*Kind{
		{
			Name: "ZtpState", Class: State, Source: SourceService, Singleton: true,
			CLI: &CLICommand{Words: []string{"ztp"}},
			Doc: "Zero-touch provisioning's progress (docs/ztp.md): armed on a data directory with no configuration when swmgr serves with --ztp, or by ZtpRearm; each attempt asks DHCP on the management interface and the front-panel ports that have link for a configuration URL (option 67), fetches and verifies the document, applies it as one confirmed commit of source ztp and confirms it when the health check passes (else it is rolled back and the attempt is made again after a backoff).",
			Fields: []*Field{
				{Name: "Enabled", Type: Bool, Doc: "swmgr serves with --ztp"},
				{Name: "Armed", Type: Bool, Doc: "provisioning runs (or will at the next start) until a configuration is confirmed or another source configures the switch"},
				{Name: "Phase", Type: String, Doc: "disabled, idle, dhcp, fetch, verify, script, apply, confirming, backoff, done, stopped"},
				{Name: "Interface", Type: String, Doc: "the management interface DHCP runs on (and, in-band, each front-panel port up with link)"},
				{Name: "ServerAddr", Type: String, Doc: "the DHCP server that made the last offer"},
				{Name: "LeaseAddr", Type: String, Doc: "the address leased, as address/prefix"},
				{Name: "LeaseInterface", Type: String, Doc: "the interface the lease is on: the management interface or a front-panel port's netdev (the first valid DHCP answer wins)"},
				{Name: "ConfigURL", Type: String, Doc: "option 67 of the last offer"},
				{Name: "ScriptURL", Type: String, Doc: "option 239 of the last offer"},
				{Name: "Verified", Type: String, Doc: "how the last document was verified: signature, sha256, unsigned (allowed by --ztp-allow-unsigned)"},
				{Name: "Attempts", Type: Int, Doc: "attempts made since armed"},
				{Name: "LastError", Type: String, Doc: "why the last attempt failed; \"\" when none did"},
				{Name: "Revision", Type: Int, Doc: "the commit provisioning made (awaiting confirmation, or confirmed when Phase is done)"},
				{Name: "FactoryRevision", Type: Int, Doc: "the revision of the configuration provisioning started from, which every failure leaves"},
				{Name: "OfferAt", Type: String, Doc: "when the last DHCP offer came (RFC 3339)"},
				{Name: "AppliedAt", Type: String, Doc: "when the last document was applied"},
				{Name: "ConfirmedAt", Type: String, Doc: "when the health check confirmed it"},
				{Name: "NextAttemptAt", Type: String, Doc: "when the next attempt starts, in Phase backoff"},
			},
		},
		{
			Name: "ZtpRearm", Class: Action, Role: RoleAdmin,
			Doc: "Arms zero-touch provisioning again (swmgr must serve with --ztp): the next attempt starts now, from the running configuration as it is, which every failure leaves. A confirmed document replaces the configuration (accounts are kept).",
		},
	}
}

// Package interop holds tflock's interoperability suite: tests that run the
// real tofu and terraform binaries and tflock's examples/lock program one
// after the other on the same configuration, against the same in-process
// sources the unit tests use (the registrytest registry over HTTPS, git
// repositories made with the git binary, and the go-containerregistry OCI
// registry behind TLS), and check that each tool reads and keeps what the
// other wrote.
//
// The tests run only when the binaries are named by the environment and
// skip with a message otherwise:
//
//	TFLOCK_TOFU=/path/to/tofu TFLOCK_TERRAFORM=/path/to/terraform go test ./internal/interop -run Interop -v
//
// Each tool run gets its own HOME, CLI configuration (TF_CLI_CONFIG_FILE,
// with a host block that points the registry's host name at the test
// server), SSL_CERT_FILE (the test servers' certificates), git
// configuration (an insteadOf rule that maps the git host to the local
// repositories), no TF_PLUGIN_CACHE_DIR, no TF_DATA_DIR, and a proxy that
// refuses every connection except to the loopback servers: nothing reaches
// the network.
//
// The package has no non-test code.
package interop

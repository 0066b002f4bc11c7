// compose-config loads a Compose file the way `docker compose config` does, with compose-go (the
// library Docker Compose itself is built on): the Compose Specification's JSON schema, interpolation,
// env_file and path resolution, and the consistency checks (a depends_on naming no service, a volume
// used but not declared, ...). It prints the resolved project as JSON, or the error and exit code 1.
// scripts/test-containers.sh checks configs/docker-compose.yml with it, and the container test runs
// the server image with the compose file's capabilities, device, sysctls and volume.
//
//	cd test/containers/compose-config && go run . ../../../configs/docker-compose.yml
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/compose-spec/compose-go/v2/cli"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: compose-config COMPOSE_FILE")
		os.Exit(2)
	}
	opts, err := cli.NewProjectOptions([]string{os.Args[1]},
		cli.WithOsEnv, cli.WithDotEnv, cli.WithConsistency(true), cli.WithResolvedPaths(true))
	if err == nil {
		var out []byte
		p, lerr := opts.LoadProject(context.Background())
		if err = lerr; err == nil {
			if out, err = p.MarshalJSON(); err == nil {
				_, err = os.Stdout.Write(append(out, '\n'))
			}
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "compose-config: %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

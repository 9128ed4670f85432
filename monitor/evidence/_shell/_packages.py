"""Package managers and language toolchains for the shell parser.

Installing, updating or publishing packages talks to a registry. The registry's host is set by configuration
the command does not show (``.npmrc``, ``pip.conf``, ``GOPROXY``), so it is unknown unless an option names it
(``--index-url``, ``--registry``). Publishing sends the package: the folder or the files named (``npm publish``
sends ``.``, ``twine upload dist/*`` the distributions). Running a package fetched on the spot (``npx``, ``uvx``,
``pipx run``) runs code the parse cannot see. Building, testing and running the project's own scripts (``npm
test``, ``cargo build``, ``go test``) stays local, and what they print is the project's content.
"""

from __future__ import annotations

import re

from monitor.evidence._shell._core import (
    NO_FLOW,
    REMOTE_FLOW,
    Arg,
    Flow,
    Run,
    has_option,
    option_values,
    split_options,
)
from monitor.evidence._shell._exec import inline_code
from monitor.evidence._shell._program import declare

_PROJECT = Flow(files=(".",))
_PIP_LONG = frozenset(
    """requirement constraint index-url extra-index-url find-links target prefix root src editable upgrade-strategy
    python-version platform implementation abi dest progress-bar cache-dir log proxy cert client-cert trusted-host
    config-settings global-option report only-binary no-binary python""".split()
)
_PIP_NETWORK = frozenset(["install", "download", "wheel", "index", "search"])
_NPM_NETWORK = frozenset(
    """install i ci add update upgrade up outdated audit view info show search login adduser logout whoami ping
    dedupe fund doctor access owner deprecate dist-tag star unpublish org team token hook install-test it
    remove rm uninstall un r import""".split()
)
_NPM_SCRIPTS = frozenset(["run", "run-script", "test", "t", "start", "stop", "restart", "build", "rebuild", "tst"])
_NPM_FETCH_AND_RUN = frozenset(["exec", "x", "dlx", "create"])
_NPM_LONG = frozenset(["registry", "prefix", "workspace", "cache", "userconfig", "otp", "tag", "access", "scope"])
_CARGO_NETWORK = frozenset(
    "install fetch update search login logout add owner yank vendor generate-lockfile publish".split()
)
_CARGO_LOCAL = frozenset("build b test t run r check c clippy fmt doc bench clean tree metadata new init fix".split())
_GO_LOCAL = frozenset("build test run vet fmt env version doc clean tool list work".split())
_SYSTEM_LOCAL = frozenset(["list", "show", "policy", "remove", "purge", "autoremove", "clean", "-Q", "-R", "--version"])
_SUBCOMMAND_NETWORK = {
    "gem": frozenset("install update push fetch search sources owner yank signin".split()),
    "bundle": frozenset("install update add outdated lock package cache".split()),
    "brew": frozenset("install reinstall upgrade update tap fetch search info outdated bundle".split()),
    "poetry": frozenset("install add update lock remove self search publish".split()),
    "pipenv": frozenset("install sync update lock uninstall".split()),
    "pdm": frozenset("install add update lock sync remove publish".split()),
    "hatch": frozenset("env publish".split()),
    "conda": frozenset("install create update upgrade search env".split()),
    "composer": frozenset("install update require create-project global".split()),
    "dotnet": frozenset("restore add tool nuget".split()),
    "pre-commit": frozenset("run install-hooks autoupdate try-repo".split()),
    "pipx": frozenset("install upgrade upgrade-all inject reinstall reinstall-all".split()),
}
_ALIASES = {"bundler": "bundle", "mamba": "conda", "micromamba": "conda"}


def _registry(run: Run, options: list[tuple[str, Arg | None]], *flags: str) -> None:
    urls = option_values(options, *flags)
    for value in urls:
        if "://" in value.text:
            run.url(value)
        else:
            run.read(value)
    if not any("://" in v.text for v in urls):
        run.unknown_host()


def _package_spec(run: Run, spec: Arg) -> None:
    """A package named on the command line: a URL or VCS address names a host, a local path is read."""
    text = spec.text.split(" @ ", 1)[-1]
    if "://" in text:
        run.url(spec.part(re.sub(r"^[a-z]+\+", "", text)))
    elif text.startswith(("git@", "github:")):
        run.host("github.com" if text.startswith("github:") else text[4:].split(":")[0])
    elif text.startswith((".", "/", "~")) or re.search(r"\.(?:whl|tar\.gz|tgz|zip|gem)$", text):
        run.read(spec)


def _pip(run: Run, name: str, args: list[Arg]) -> Flow:
    options, positional = split_options(args, "rcifted", _PIP_LONG)
    sub = positional[0].text if positional else ""
    if sub not in _PIP_NETWORK:
        return NO_FLOW
    for value in option_values(options, "-r", "--requirement", "-c", "--constraint"):
        run.read(value)
    for value in option_values(options, "-e", "--editable") + positional[1:]:
        _package_spec(run, value)
    for value in option_values(options, "-t", "--target", "-d", "--dest"):
        run.write(value, REMOTE_FLOW, fetched=True)
    if has_option(options, "--no-index"):
        for value in option_values(options, "-f", "--find-links"):
            run.read(value)
        return NO_FLOW
    _registry(run, options, "-i", "--index-url", "--extra-index-url", "-f", "--find-links")
    if option_values(options, "--extra-index-url"):
        run.unknown_host()
    return NO_FLOW


def _fetch_and_run(run: Run, name: str, package: str) -> Flow:
    run.unknown_host()
    run.opaque(f"{name} runs {package or 'a package'} fetched from a registry")
    return REMOTE_FLOW


def _uv(run: Run, name: str, args: list[Arg]) -> Flow:
    long = {"with", "python", "project", "directory", "env-file", "index", "index-url", "extra-index-url", "from"}
    long |= {"publish-url", "token", "username", "password", "package", "group", "extra"}
    options, positional = split_options(args, "pw", long, stop_at_positional=True)
    for value in option_values(options, "--env-file"):
        run.read(value)
    if name == "uvx":
        return _fetch_and_run(run, name, positional[0].text if positional else "")
    sub = positional[0].text if positional else ""
    rest = positional[1:]
    if sub == "pip":
        return _pip(run, "pip", rest)
    if sub == "run":
        inner_options, command = split_options(rest, "pw", long, stop_at_positional=True)
        for value in option_values(inner_options, "--env-file"):
            run.read(value)
        if option_values(options + inner_options, "--with"):
            run.unknown_host()
        run.note("uv run may install the project's dependencies first")
        return run.dispatch(command)
    if sub == "tool" and rest[:1] and rest[0].text == "run":
        return _fetch_and_run(run, name, rest[1].text if len(rest) > 1 else "")
    if sub == "publish":
        for arg in [a for a in rest if not a.text.startswith("-")] or [Arg("dist/*")]:
            run.upload_file(arg)
        _registry(run, options, "--publish-url", "--index-url")
        return NO_FLOW
    if sub in ("venv", "init", "version", "help", "cache", "python", "") and not (sub == "python" and rest[:1]):
        return NO_FLOW
    _registry(run, options, "--index-url", "--index", "--extra-index-url")
    return NO_FLOW


def _npm(run: Run, name: str, args: list[Arg]) -> Flow:
    options, positional = split_options(args, "wC", _NPM_LONG)
    for value in option_values(options, "--userconfig"):
        run.read(value)
    if name in ("npx", "pnpx", "bunx"):
        return _fetch_and_run(run, name, positional[0].text if positional else "")
    sub = positional[0].text if positional else ""
    rest = positional[1:]
    if name == "bun" and (has_option(options, "-e", "--eval") or sub in ("-e", "--eval")):
        inline_code(run, name, " ".join(a.text for a in args))
        return REMOTE_FLOW
    if sub == "publish":
        for arg in rest or [Arg(".")]:
            run.upload(run.read_content(arg))
        _registry(run, options, "--registry")
        return NO_FLOW
    if sub in _NPM_FETCH_AND_RUN or (sub == "init" and rest and name != "bun"):
        return _fetch_and_run(run, f"{name} {sub}", rest[0].text if rest else "")
    if sub in _NPM_NETWORK or (sub == "" and name in ("yarn", "pnpm", "bun")):
        for spec in rest:
            _package_spec(run, spec)
        _registry(run, options, "--registry")
        return NO_FLOW
    if sub in _NPM_SCRIPTS or (name in ("yarn", "pnpm") and sub not in ("pack", "config", "list", "ls", "why", "")):
        return _PROJECT
    if name == "bun" and sub and sub not in ("pack", "pm", "x"):
        run.read(positional[0])
        run.execute(positional[0])
        run.opaque(f"runs a local script: {sub}")
        return REMOTE_FLOW
    if sub == "pack":
        run.write("package.tgz", _PROJECT)
    return NO_FLOW


def _cargo(run: Run, name: str, args: list[Arg]) -> Flow:
    options, positional = split_options(args, "pZ", {"manifest-path", "registry", "index", "package", "target"})
    sub = positional[0].text if positional else ""
    if sub in _CARGO_LOCAL or sub.startswith("+") or not sub:
        return _PROJECT if sub else NO_FLOW
    if sub not in _CARGO_NETWORK:
        run.opaque(f"cargo {sub} is a plugin the parse does not know")
        return NO_FLOW
    if sub == "publish":
        manifests = option_values(options, "--manifest-path")
        folder = (re.sub(r"/?Cargo\.toml$", "", manifests[0].text) or ".") if manifests else "."
        run.upload(run.read_content(folder))
    _registry(run, options, "--index")
    return NO_FLOW


def _go(run: Run, name: str, args: list[Arg]) -> Flow:
    words = [a.text for a in args if not a.text.startswith("-")]
    sub = words[0] if words else ""
    if sub == "generate":
        run.opaque("go generate runs commands written in the source")
        return NO_FLOW
    if sub in _GO_LOCAL and not (sub == "list" and "-m" in [a.text for a in args]):
        return _PROJECT if sub in ("build", "test", "run", "vet") else NO_FLOW
    if sub == "mod" and words[1:2] in (["edit"], ["graph"], ["verify"], ["why"], ["init"]):
        return NO_FLOW
    if not sub:
        return NO_FLOW
    run.unknown_host()
    return NO_FLOW


def _twine(run: Run, name: str, args: list[Arg]) -> Flow:
    long = {"repository", "repository-url", "username", "password", "config-file"}
    options, positional = split_options(args, "rupc", long)
    if not positional or positional[0].text != "upload":
        return NO_FLOW
    for arg in positional[1:] or [Arg("dist/*")]:
        run.upload_file(arg)
    for value in option_values(options, "--config-file"):
        run.read(value)
    _registry(run, options, "--repository-url")
    return NO_FLOW


def _subcommand(run: Run, name: str, args: list[Arg]) -> Flow:
    """Managers whose subcommands either talk to their registry or stay local; ``run``/``exec`` wrap a command."""
    family = _ALIASES.get(name, name)
    options, positional = split_options(args, "nfp" if family == "conda" else "", {"file", "name", "prefix"})
    sub = positional[0].text if positional else ""
    if sub in ("run", "exec") and family in ("poetry", "pipenv", "pdm", "hatch", "conda", "bundle", "pipx"):
        if family == "pipx":
            return _fetch_and_run(run, "pipx run", positional[1].text if len(positional) > 1 else "")
        return run.dispatch(positional[1:])
    for value in option_values(options, "-f", "--file"):
        run.read(value)
    if family == "gem" and sub == "push":
        for arg in positional[1:]:
            run.upload_file(arg)
    if family in ("poetry", "pdm", "hatch") and sub == "publish":
        run.upload_file("dist/*")
    if family == "dotnet" and sub == "nuget" and positional[1:2] and positional[1].text == "push":
        for arg in positional[2:3]:
            run.upload_file(arg)
    if sub in _SUBCOMMAND_NETWORK.get(family, frozenset()) or (family == "bundle" and not sub):
        run.unknown_host()
        return NO_FLOW
    if family in ("poetry", "dotnet") and sub in ("build", "test", "run"):
        return _PROJECT
    return NO_FLOW


def _system(run: Run, name: str, args: list[Arg]) -> Flow:
    words = [a.text for a in args]
    if not words or words[0] in _SYSTEM_LOCAL or (name == "pacman" and words[0].startswith(("-Q", "-R"))):
        return NO_FLOW
    run.unknown_host()
    return NO_FLOW


def _resolver(run: Run, name: str, args: list[Arg]) -> Flow:
    """Build tools that resolve dependencies from repositories as they build (Maven, Gradle, tox, ...)."""
    for k, arg in enumerate(args[:-1]):
        if arg.text in ("-s", "--settings", "-c", "--conf"):
            run.read(args[k + 1])
    if args and args[0].text in ("--version", "-v", "--help", "-h"):
        return NO_FLOW
    run.unknown_host()
    return _PROJECT


def _deno(run: Run, name: str, args: list[Arg]) -> Flow:
    options, positional = split_options(args, "", {"config", "import-map", "env-file", "allow-net"})
    for value in option_values(options, "--env-file", "--config", "--import-map"):
        run.read(value)
    sub = positional[0].text if positional else ""
    if sub == "eval":
        inline_code(run, name, " ".join(a.text for a in positional[1:]))
        return REMOTE_FLOW
    if sub in ("fmt", "lint", "test", "check", "info", "doc", "task", "bench", "") or len(positional) < 2:
        return _PROJECT if sub else NO_FLOW
    script = positional[1]
    if "://" in script.text:
        run.url(script)
        run.opaque(f"deno runs code fetched from {script.text}")
    else:
        run.read(script)
        run.execute(script)
        run.opaque(f"runs a local script: {script.text}")
    return REMOTE_FLOW


_SYSTEMS = "apt apt-get yum dnf apk pacman zypper snap flatpak choco winget scoop port pkg emerge nix-env"
PACKAGE_PROGRAMS = (
    declare("pip", _pip),
    declare("uv uvx", _uv),
    declare("twine", _twine),
    declare("cargo", _cargo),
    declare("go", _go),
    declare("npm npx pnpm pnpx yarn bun bunx", _npm),
    declare([*_SUBCOMMAND_NETWORK, *_ALIASES], _subcommand),
    declare(_SYSTEMS, _system),
    declare("mvn mvnw gradle gradlew sbt lein bazel bazelisk tox nox", _resolver),
    declare("deno", _deno),
)
"""Package managers and language toolchains."""

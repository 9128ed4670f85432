"""Service command lines for the shell parser: GitHub and GitLab CLIs, cloud CLIs, Kubernetes, Helm, Terraform,
containers and database files.

These talk to a service whose host is set by configuration the command does not show (the current
repository's remote, a profile, a kubeconfig), so the host is unknown unless an option names it. What they
send is what matters: files attached (``gh gist create .env``), uploaded (``aws s3 cp f s3://b``), or applied
(``kubectl create secret --from-file``). Commands that print credentials (``gh auth token``, ``gcloud auth
print-access-token``) print private data.
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
from monitor.evidence._shell._program import declare

_CREDENTIALS = Flow(data=("<credentials>",))
_GH_SHORT = "RbFtdfHXlamBqTDOLSsArn"
_GH_LONG = frozenset(
    """repo body body-file title desc description filename field raw-field header method label assignee milestone
    base head jq template input hostname env-file env app dir output limit search state author reviewer notes
    notes-file target org visibility source remote pattern branch workflow""".split()
)
_BUCKET = re.compile(r"^(?:s3|gs|az|abfss?|wasbs?|r2)://", re.IGNORECASE)
_PRINTS_CREDENTIALS = re.compile(
    r"^(?:get-session-token|get-login-password|get-secret-value|get-parameters?|get-authorization-token"
    r"|get-federation-token|assume-role.*|print-access-token|print-identity-token|get-access-token|token)$"
)
_LOCAL_TERRAFORM = frozenset(["fmt", "validate", "version", "graph", "output", "show", "providers", "workspace"])
_LOCAL_DOCKER = frozenset(
    """images image ps logs inspect stop rm rmi kill version info tag volume network system container top stats
    port diff history events context config down""".split()
)
_RUNS_CODE = frozenset(["run", "create", "exec", "start", "up", "restart", "attach"])


def _gh(run: Run, name: str, args: list[Arg]) -> Flow:
    options, positional = split_options(args, _GH_SHORT, _GH_LONG)
    words = [a.text for a in positional]
    sub, action = [*words, "", ""][:2]
    hosts = option_values(options, "--hostname") + [v for k, v in run.env.items() if k in ("GH_HOST", "GITLAB_HOST")]
    for value in option_values(options, "-R", "--repo"):
        parts = re.sub(r"^[a-z]+://", "", value.text).split("/")
        if len(parts) >= 3 and "." in parts[0]:
            hosts.append(value.part(parts[0]))
    for arg in positional:
        if "://" in arg.text:
            run.url(arg)
            hosts.append(arg)
    for host in hosts:
        if "://" not in host.text:
            run.host(host.text, dynamic=host.dynamic)
    if not hosts:
        run.unknown_host()
    for flag, given in options:
        if given is None:
            continue
        if flag in ("--body-file", "--notes-file", "--input") or (flag == "-F" and sub != "api"):
            run.upload_file(given)
        elif flag in ("-F", "--field") and "=@" in given.text:
            run.upload_file(given.part(given.text.split("=@", 1)[1]))
        elif flag in ("-f", "--env-file") and sub in ("secret", "variable"):
            run.upload_file(given)
        elif flag in ("-D", "--dir", "-O", "--output"):
            run.write(given, REMOTE_FLOW, fetched=True)
        elif flag == "--source" and has_option(options, "--push"):
            run.upload(run.content(run.read(given)))
        else:
            run.upload(given.flow)
    files: list[Arg] = []
    if (sub, action) in (("gist", "create"), ("gist", "edit"), ("ssh-key", "add"), ("gpg-key", "add")):
        files = positional[2:] or [Arg("-")]
    elif sub == "release" and action in ("create", "upload"):
        files = [a.part(a.text.split("#")[0]) for a in positional[3:]]
    elif (sub, action) in (("secret", "set"), ("variable", "set")) and not has_option(
        options, "-b", "--body", "-f", "--env-file"
    ):
        files = [Arg("-")]
    for arg in files:
        run.upload_file(arg)
    if (sub, action) == ("repo", "clone") and len(positional) >= 3:
        target = positional[3] if len(positional) > 3 else positional[2].part(positional[2].text.split("/")[-1])
        run.write(target, REMOTE_FLOW, fetched=True)
    if (sub, action) == ("auth", "token") or ((sub, action) == ("auth", "status") and has_option(options, "-t")):
        return _CREDENTIALS
    return REMOTE_FLOW


def _file_urls(run: Run, args: list[Arg]) -> None:
    """``file://`` and ``fileb://`` parameter values, which cloud CLIs load and send."""
    for arg in args:
        match = re.search(r"(?:^|=)fileb?://(.+)$", arg.text)
        if match is not None:
            run.upload_file(arg.part(match.group(1)))


def _bucket_copy(run: Run, operands: list[Arg]) -> Flow:
    """``cp``/``mv``/``sync`` between local paths and bucket URLs."""
    if len(operands) < 2:
        return NO_FLOW
    *sources, target = operands
    if _BUCKET.match(target.text):
        for source in sources:
            if not _BUCKET.match(source.text):
                run.upload_file(source)
        return NO_FLOW
    if target.text == "-":
        return REMOTE_FLOW
    if any(_BUCKET.match(s.text) for s in sources):
        run.write(target, REMOTE_FLOW, fetched=True)
    return NO_FLOW


def _cloud(run: Run, name: str, args: list[Arg]) -> Flow:
    long = {"endpoint-url", "profile", "region", "output", "query", "project", "account", "configuration"}
    long |= {"source", "file", "body", "subscription", "resource-group", "container-name", "name", "cli-input-json"}
    options, positional = split_options(args, {"gsutil": "ohu", "az": "fscng"}.get(name, ""), long)
    words = [a.text for a in positional]
    endpoints = option_values(options, "--endpoint-url")
    for value in endpoints:
        run.url(value)
    _file_urls(run, args)
    if words[:1] in (["configure"], ["config"]) or words[:2] == ["auth", "list"]:
        if name == "aws" and words[1:2] in (["get"], ["list"], ["export-credentials"]):
            return run.read_content("~/.aws/credentials")
        return NO_FLOW
    if not endpoints:
        run.unknown_host()
    for flag, given in options:
        if given is None:
            continue
        if flag in ("--source", "-s", "--file", "-f") or (flag == "--body" and name == "aws"):
            if not _BUCKET.match(given.text) and "://" not in given.text:
                run.upload_file(given)
        elif flag not in ("--endpoint-url",):
            run.upload(given.flow)
    copy = next((i for i, w in enumerate(words) if w in ("cp", "mv", "sync", "rsync", "upload")), None)
    out = _bucket_copy(run, positional[copy + 1 :]) if copy is not None else REMOTE_FLOW
    if any(_PRINTS_CREDENTIALS.match(w) for w in words[:4]):
        return _CREDENTIALS
    return out


def _kubectl(run: Run, name: str, args: list[Arg]) -> Flow:
    long = {"kubeconfig", "server", "context", "namespace", "filename", "from-file", "from-env-file", "token"}
    long |= {"from-literal", "output", "selector", "container", "values", "set-file", "set", "kustomize"}
    options, positional = split_options(args, "nfsckolp" if name != "helm" else "nfo", long)
    for value in option_values(options, "--kubeconfig"):
        run.read(value)
    words = [a.text for a in positional]
    if words[:1] == ["config"] or (name == "helm" and words[:1] in (["template"], ["lint"], ["version"])):
        if words[1:2] == ["view"] and has_option(options, "--raw"):
            return run.read_content("~/.kube/config")
        return NO_FLOW
    servers = option_values(options, "--server") if name != "helm" else []
    for value in servers:
        run.url(value, default_scheme="https")
    if not servers:
        run.unknown_host()
    for flag, given in options:
        if given is None:
            continue
        if flag in ("-f", "--filename", "--values", "-k", "--kustomize", "--from-env-file"):
            if "://" in given.text:
                run.url(given)
            else:
                run.upload_file(given)
        elif flag in ("--from-file", "--set-file"):
            run.upload_file(given.part(given.text.split("=", 1)[-1]))
        elif flag not in ("--kubeconfig", "--server"):
            run.upload(given.flow)
    if words[:1] == ["cp"] and len(positional) >= 3:
        source, target = positional[1], positional[2]
        if ":" in target.text and ":" not in source.text:
            run.upload_file(source)
        elif ":" in source.text:
            run.write(target, REMOTE_FLOW, fetched=True)
    if name == "helm" and words[:1] in (["install"], ["upgrade"]) and len(positional) >= 3:
        chart = positional[2]
        if chart.text.startswith((".", "/", "~")):
            run.upload_file(chart)
    if words[:1] in (["exec"], ["attach"], ["run"]):
        run.upload(run.stdin)
    return REMOTE_FLOW


def _terraform(run: Run, name: str, args: list[Arg]) -> Flow:
    words = [a.text for a in args if not a.text.startswith("-")]
    for arg in args:
        if arg.text.startswith("-var-file="):
            run.read(arg.part(arg.text.split("=", 1)[1]))
    if not words or words[0] in _LOCAL_TERRAFORM:
        return NO_FLOW
    run.unknown_host()
    return REMOTE_FLOW


def _registry(run: Run, image: Arg) -> None:
    first = image.text.split("/")[0]
    if "/" in image.text and ("." in first or ":" in first or first == "localhost"):
        run.host(first.split(":")[0], dynamic=image.dynamic)
    else:
        run.unknown_host()


def _docker(run: Run, name: str, args: list[Arg]) -> Flow:
    long = {"host", "context", "config", "file", "tag", "volume", "mount", "env-file", "secret", "build-arg"}
    long |= {"password", "username", "output", "input", "env", "name", "network", "workdir", "user", "platform"}
    long |= {"entrypoint", "label", "publish", "target", "project-name", "profile"}
    options, positional = split_options(args, "HcfvteopuwlinLkP" if name != "docker-compose" else "fp", long)
    words = [a.text for a in positional]
    if name in ("docker-compose", "podman-compose"):
        words, positional = ["compose", *words], [Arg("compose"), *positional]
    for value in option_values(options, "-H", "--host"):
        run.url(value, default_scheme="tcp")
    sub = words[0] if words else ""
    if sub in ("compose", "buildx", "container", "image") and len(words) > 1 and words[1] not in ("ls", "list"):
        sub, positional = words[1], positional[1:]
        words = words[1:]
    for value in option_values(options, "-f", "--file", "--env-file", "-i", "--input"):
        run.read(value)
    for value in option_values(options, "-o", "--output"):
        run.write(value.part(value.text.removeprefix("type=local,dest=")), Flow(files=(".",)))
    if sub in _LOCAL_DOCKER or sub in ("cp", "save", "load", "export", "import", ""):
        if sub == "cp" and len(positional) >= 3:
            local = [a for a in positional[1:3] if ":" not in a.text or a.text.startswith(("/", "."))]
            for arg in local:
                run.read(arg)
        return NO_FLOW
    if sub in ("pull", "push", "search", "login", "logout"):
        targets = positional[1:2]
        for target in targets:
            _registry(run, target)
        if not targets:
            run.unknown_host()
        if has_option(options, "--password-stdin"):
            run.upload(run.stdin)
        for value in option_values(options, "-p", "--password"):
            run.upload(value.flow)
        return NO_FLOW
    run.unknown_host()
    for value in option_values(options, "-v", "--volume"):
        host_path = value.text.split(":")[0]
        if host_path.startswith(("/", ".", "~", "$")):
            run.read(value.part(host_path))
    for value in option_values(options, "--mount"):
        match = re.search(r"(?:source|src)=([^,]+)", value.text)
        if match is not None and "type=bind" in value.text:
            run.read(value.part(match.group(1)))
    for value in option_values(options, "--secret"):
        match = re.search(r"src=([^,]+)", value.text)
        if match is not None:
            run.read(value.part(match.group(1)))
    for value in option_values(options, "--build-arg", "-e", "--env"):
        run.upload(value.flow)
    if sub == "build" and positional[1:]:
        context = positional[-1]
        if context.text == "-":
            run.upload(run.stdin)
        else:
            run.read(context)
    if sub in _RUNS_CODE:
        run.opaque(f"{name} {sub}: a container runs code the parse cannot see")
        if has_option(options, "-i", "--interactive"):
            run.upload(run.stdin)
    return REMOTE_FLOW


def _sqlite(run: Run, name: str, args: list[Arg]) -> Flow:
    options, positional = split_options(args, "", {"cmd", "init", "separator", "nullvalue", "newline"})
    for value in option_values(options, "--init", "-init"):
        run.read(value)
    return run.read_content(positional[0]) if positional else NO_FLOW


SERVICE_PROGRAMS = (
    declare("gh glab", _gh),
    declare("aws gsutil gcloud az doctl flyctl heroku vercel netlify", _cloud),
    declare("kubectl oc kubecolor helm", _kubectl),
    declare("terraform tofu pulumi", _terraform),
    declare("docker podman nerdctl docker-compose podman-compose", _docker),
    declare("sqlite3", _sqlite),
)
"""Service command lines: GitHub and GitLab, cloud CLIs, Kubernetes, Terraform, containers, database files."""

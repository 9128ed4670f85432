"""Network programs for the shell parser: HTTP clients, raw sockets, remote shells and copies, mail, databases.

Each handler records the hosts a program reaches and the local content it sends (files named in its options,
its standard input when the program forwards it), and returns what it prints: content fetched from the network.
"""

from __future__ import annotations

import posixpath
import re

from monitor.evidence._shell._core import (
    NO_FLOW,
    REMOTE_FLOW,
    UNKNOWN_FLOW,
    Arg,
    Flow,
    Run,
    has_option,
    host_of_url,
    option_values,
    remote_host,
    split_options,
)
from monitor.evidence._shell._program import declare

_CURL_SHORT = "AbcCdDeEFHKmoPQrtTuUwxXyYz"
_CURL_LONG = frozenset(
    """data data-ascii data-binary data-raw data-urlencode json form form-string upload-file output url header
    user request user-agent referer cookie cookie-jar config proxy proxy-user cert key cacert capath netrc-file
    max-time connect-timeout write-out range dump-header resolve connect-to interface local-port retry
    retry-delay retry-max-time limit-rate max-filesize output-dir socks4 socks4a socks5 socks5-hostname preproxy
    oauth2-bearer aws-sigv4 unix-socket abstract-unix-socket ciphers continue-at create-file-mode dns-servers
    doh-url expect100-timeout ftp-port hostpubmd5 key-type cert-type krb login-options mail-from mail-rcpt
    mail-auth max-redirs noproxy pass pinnedpubkey proto proto-redir proxy-header pubkey quote random-file
    request-target sasl-authzid service-name speed-limit speed-time stderr time-cond tls-max tlsuser
    tlspassword trace trace-ascii variable url-query happy-eyeballs-timeout-ms proxy-cacert proxy-cert
    proxy-key etag-save etag-compare libcurl""".split()
)
_WGET_SHORT = "aABDeiIlnoOPQRtTUwX"
_WGET_LONG = frozenset(
    """output-document output-file append-output input-file base tries timeout wait quota directory-prefix
    user-agent level accept reject domains include-directories exclude-directories post-data post-file
    body-data body-file method header user password http-user http-password ftp-user ftp-password proxy-user
    proxy-password load-cookies save-cookies certificate private-key ca-certificate ca-directory execute
    referer bind-address limit-rate waitretry config restrict-file-names dns-timeout connect-timeout
    read-timeout""".split()
)
_SSH_SHORT = "bcDEeFIiJLlmOopQRSWwB"
_SSH_COMMAND_OPTIONS = frozenset(["proxycommand", "localcommand", "knownhostscommand", "permitlocalcommand"])
_FTP_PUT = re.compile(r"^\s*(?:put|send|mput|append|reput)\s+(\S+)", re.IGNORECASE | re.MULTILINE)
_FTP_GET = re.compile(r"^\s*(?:get|mget|recv|reget)\s+\S+(?:\s+(\S+))?", re.IGNORECASE | re.MULTILINE)
_SOCAT_NETWORK = frozenset(
    "TCP TCP4 TCP6 TCP-CONNECT TCP4-CONNECT TCP6-CONNECT UDP UDP4 UDP6 UDP-SENDTO OPENSSL SSL OPENSSL-CONNECT"
    " SOCKS SOCKS4 SOCKS4A SOCKS5 PROXY PROXY-CONNECT SCTP SCTP-CONNECT".split()
)
_DNS_TOOLS = frozenset(["ping", "ping6", "dig", "nslookup", "host", "whois", "traceroute", "tracepath", "mtr", "nmap"])


def _curl(run: Run, name: str, args: list[Arg]) -> Flow:
    options, positional = split_options(args, _CURL_SHORT, _CURL_LONG)
    urls = positional + option_values(options, "--url")
    for config in option_values(options, "-K", "--config"):
        run.read(config)
        run.opaque("curl reads more options from a config file")
    for flag, value in options:
        if value is None:
            continue
        text = value.text
        if flag in ("-d", "--data", "--data-ascii", "--data-binary", "--json") and text.startswith("@"):
            run.upload_file(value.part(text[1:]))
        elif flag == "--data-urlencode":
            special = re.search(r"[@=]", text)
            if special is not None and special.group() == "@":
                run.upload_file(value.part(text[special.end() :]))
            else:
                run.upload(value.flow)
        elif flag in ("-F", "--form"):
            field = text.partition("=")[2]
            if field[:1] in ("@", "<"):
                run.upload_file(value.part(field[1:].split(";")[0].strip('"')))
            else:
                run.upload(value.flow)
        elif flag in ("-T", "--upload-file"):
            run.upload_file(value.part("-") if text == "." else value)
        elif flag in ("-H", "--header", "--proxy-header") and text.startswith("@"):
            run.upload_file(value.part(text[1:]))
        elif flag in ("-b", "--cookie") and "=" not in text:
            run.upload_file(value)
        elif flag in ("-E", "--cert", "--key", "--cacert", "--netrc-file", "--proxy-cert", "--proxy-key"):
            run.read(value)
        elif flag in ("-o", "--output"):
            run.write(value, REMOTE_FLOW, fetched=True)
        elif flag in ("-D", "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii", "--stderr"):
            run.write(value)
        elif flag in ("-x", "--proxy", "--preproxy", "--socks4", "--socks4a", "--socks5", "--socks5-hostname"):
            run.url(value, default_scheme="http")
        elif flag in ("--connect-to", "--resolve"):
            parts = text.split(":")
            if len(parts) >= 3 and parts[2]:
                run.host(parts[2].strip("[]"), dynamic=value.dynamic)
        elif flag == "--doh-url":
            run.url(value)
        else:
            run.upload(value.flow)
    for url in urls:
        run.upload(url.flow)
        run.url(url, default_scheme="http")
    if has_option(options, "-O", "--remote-name", "--remote-name-all"):
        for url in urls:
            path = re.sub(r"^[a-z]+://[^/]*", "", url.text, flags=re.IGNORECASE).split("?")[0]
            run.write(url.part(posixpath.basename(path) or "index.html"), REMOTE_FLOW, fetched=True)
    if has_option(options, "-o", "--output", "-O", "--remote-name", "--remote-name-all"):
        return NO_FLOW
    return REMOTE_FLOW if urls else NO_FLOW


def _wget(run: Run, name: str, args: list[Arg]) -> Flow:
    options, urls = split_options(args, _WGET_SHORT, _WGET_LONG)
    output = option_values(options, "-O", "--output-document")
    for flag, value in options:
        if value is None:
            continue
        if flag in ("-i", "--input-file"):
            run.read(value)
            run.unknown_host()
            run.note("wget reads the URLs to fetch from a file")
        elif flag in ("--post-file", "--body-file"):
            run.upload_file(value)
        elif flag in ("--certificate", "--private-key", "--ca-certificate", "--load-cookies", "--config"):
            run.read(value)
        elif flag in ("-o", "--output-file", "-a", "--append-output", "--save-cookies"):
            run.write(value)
        elif flag in ("-O", "--output-document") and value.text != "-":
            run.write(value, REMOTE_FLOW, fetched=True)
        elif flag in ("-e", "--execute"):
            run.note(f"wget runs the setting {value.text}")
        elif flag not in ("-P", "--directory-prefix"):
            run.upload(value.flow)
    for url in urls:
        run.upload(url.flow)
        run.url(url, default_scheme="http")
        if not output:
            folder = (option_values(options, "-P", "--directory-prefix") or [Arg("")])[-1].text
            path = re.sub(r"^[a-z]+://[^/]*", "", url.text, flags=re.IGNORECASE).split("?")[0]
            target = posixpath.join(folder, posixpath.basename(path) or "index.html")
            run.write(url.part(target), REMOTE_FLOW, fetched=True)
    return REMOTE_FLOW if output and output[-1].text == "-" else NO_FLOW


def _netcat(run: Run, name: str, args: list[Arg]) -> Flow:
    options, positional = split_options(args, "pswiqxXeIOTVMmcg", {"exec", "sh-exec", "lua-exec", "proxy"})
    for flag, value in options:
        if flag in ("-e", "-c", "--exec", "--sh-exec", "--lua-exec") and value is not None:
            run.opaque(f"{name} {flag} runs a program on the connection")
            run.nested(value.text)
        elif flag in ("-x", "--proxy") and value is not None:
            run.url(value, default_scheme="http")
    if has_option(options, "-U"):
        return run.stdin
    if has_option(options, "-l", "--listen"):
        run.unknown_host()
        run.note(f"{name} listens for connections")
    elif positional:
        run.host(positional[0].text, dynamic=positional[0].dynamic)
    else:
        return NO_FLOW
    run.upload(run.stdin)
    return REMOTE_FLOW


def _socat(run: Run, name: str, args: list[Arg]) -> Flow:
    addresses = [a for a in args if not a.text.startswith("-") or a.text == "-"][:2]
    local = NO_FLOW
    network = False
    for address in addresses:
        kind, _, params = address.text.partition(":")
        kind = kind.upper()
        if address.text == "-" or kind in ("STDIO", "STDIN", "STDOUT"):
            local = local | run.stdin
        elif kind in _SOCAT_NETWORK:
            run.host(re.split(r"[:,]", params)[0], dynamic=address.dynamic)
            network = True
        elif "LISTEN" in kind or "RECV" in kind:
            run.unknown_host()
            network = True
        elif kind in ("EXEC", "SYSTEM"):
            run.opaque(f"socat {kind} runs a program")
            run.nested(params.split(",")[0])
        elif kind in ("FILE", "OPEN", "GOPEN", "CREATE", "PIPE") or ":" not in address.text:
            local = local | run.read_content(address.part(params.split(",")[0] if ":" in address.text else kind))
    if network:
        run.upload(local)
        return REMOTE_FLOW
    return local


def _ftp_script(run: Run, text: str) -> None:
    """The commands a file-transfer client reads: files put are uploads, files got are downloads."""
    for match in _FTP_PUT.finditer(text):
        run.upload_file(match.group(1))
    for match in _FTP_GET.finditer(text):
        if match.group(1):
            run.write(match.group(1), REMOTE_FLOW, fetched=True)


def _ftp(run: Run, name: str, args: list[Arg]) -> Flow:
    options, positional = split_options(args, "bPopeicuF", {"execute", "port", "user"})
    for value in option_values(options, "-b") if name == "sftp" else []:
        run.read(value)
        run.opaque("sftp reads its commands from a batch file")
    for value in option_values(options, "-e", "-c", "--execute") if name == "lftp" else []:
        _ftp_script(run, value.text.replace(";", "\n"))
    for arg in positional[:1]:
        target = arg.text
        host = host_of_url(target) if "://" in target else target.rsplit("@", 1)[-1].split(":")[0]
        run.host(host or "", dynamic=arg.dynamic)
    if name == "tftp" and len(positional) >= 3 and positional[1].text == "put":
        run.upload_file(positional[2])
    if run.stdin.text is not None:
        _ftp_script(run, run.stdin.text)
    elif run.stdin.files or run.stdin.unknown:
        run.upload(run.stdin)
        run.opaque(f"{name} reads commands from its standard input")
    return REMOTE_FLOW if positional else NO_FLOW


def _ssh_options(run: Run, options: list[tuple[str, Arg | None]], *, copy: bool = False) -> None:
    for flag, value in options:
        if value is None:
            continue
        if flag in ("-i", "-F"):
            run.read(value)
        elif flag == "-J":
            for jump in value.text.split(","):
                run.host(_ssh_host(jump), dynamic=value.dynamic)
        elif flag == "-W":
            run.host(value.text.rsplit(":", 1)[0], dynamic=value.dynamic)
        elif flag == "-E":
            run.write(value)
        elif flag == "-S" and copy:
            run.opaque(f"the copy connects through {value.text}")
        elif flag == "-o":
            key, _, setting = value.text.replace("=", " ", 1).partition(" ")
            key = key.lower()
            if key in _SSH_COMMAND_OPTIONS:
                run.opaque(f"ssh option {key} runs a command")
                run.nested(setting.strip())
            elif key in ("hostname", "proxyjump"):
                run.host(_ssh_host(setting.strip()), dynamic=value.dynamic)


def _ssh_host(text: str) -> str:
    if "://" in text:
        return host_of_url(text) or ""
    host = text.rsplit("@", 1)[-1]
    return host[1:].split("]")[0] if host.startswith("[") else host.split(":")[0]


def _ssh(run: Run, name: str, args: list[Arg]) -> Flow:
    options, rest = split_options(args, _SSH_SHORT, (), stop_at_positional=True)
    _ssh_options(run, options)
    if not rest:
        return NO_FLOW
    run.host(_ssh_host(rest[0].text), dynamic=rest[0].dynamic)
    if len(rest) > 1:
        run.note("the remote command runs on the remote host")
    run.upload(run.stdin)
    return REMOTE_FLOW


def _copy_remote(run: Run, sources: list[Arg], target: Arg) -> None:
    """scp/rsync operands: local sources sent to a remote target, remote sources fetched to a local one."""
    target_host = remote_host(target.text)
    remote_sources = False
    for source in sources:
        host = remote_host(source.text)
        if host is not None:
            run.host(host, dynamic=source.dynamic)
            remote_sources = True
        elif target_host is not None:
            run.upload_file(source)
        else:
            run.read(source)
    if target_host is not None:
        run.host(target_host, dynamic=target.dynamic)
    elif remote_sources:
        run.write(target, REMOTE_FLOW, fetched=True)
    else:
        run.write(target, run.content(p for s in sources for p in run.read(s)))


def _scp(run: Run, name: str, args: list[Arg]) -> Flow:
    options, operands = split_options(args, "cFiJloPSDX", ())
    _ssh_options(run, options, copy=True)
    if len(operands) >= 2:
        _copy_remote(run, operands[:-1], operands[-1])
    elif operands:
        host = remote_host(operands[0].text)
        if host is not None:
            run.host(host, dynamic=operands[0].dynamic)
    return NO_FLOW


_RSYNC_LONG = frozenset(
    """rsh filter exclude include exclude-from include-from files-from password-file port log-file log-file-format
    backup-dir partial-dir temp-dir compare-dest copy-dest link-dest chmod chown usermap groupmap bwlimit timeout
    contimeout max-size min-size max-delete out-format rsync-path remote-option suffix block-size modify-window
    compress-level skip-compress info debug protocol iconv checksum-choice outbuf sockopts address
    only-write-batch write-batch read-batch stop-after stop-at""".split()
)


def _rsync(run: Run, name: str, args: list[Arg]) -> Flow:
    options, operands = split_options(args, "efTBM", _RSYNC_LONG)
    for flag, value in options:
        if value is None:
            continue
        if flag in ("--exclude-from", "--include-from", "--files-from", "--password-file", "--read-batch"):
            run.read(value)
        elif flag in ("-e", "--rsh"):
            words = value.text.split()
            if not words or program_basename(words[0]) not in ("ssh", "ssh.exe"):
                run.opaque(f"rsync connects through {value.text}")
            for i, word in enumerate(words[:-1]):
                if word == "-i":
                    run.read(words[i + 1])
        elif flag in ("--log-file", "--write-batch", "--only-write-batch"):
            run.write(value)
    if len(operands) >= 2:
        _copy_remote(run, operands[:-1], operands[-1])
    elif operands and (host := remote_host(operands[0].text)) is not None:
        run.host(host, dynamic=operands[0].dynamic)
    return NO_FLOW


def program_basename(text: str) -> str:
    """A program's file name without its folder."""
    return re.split(r"[\\/]", text)[-1]


def _telnet(run: Run, name: str, args: list[Arg]) -> Flow:
    _, positional = split_options(args, "lnbeS", ())
    if not positional:
        return NO_FLOW
    run.host(positional[0].text, dynamic=positional[0].dynamic)
    run.upload(run.stdin)
    return REMOTE_FLOW


def _lookup(run: Run, name: str, args: list[Arg]) -> Flow:
    _, positional = split_options(args, "cistwWIpfqxbtyp" if name != "dig" else "bcfkpqtxy", ())
    for arg in positional:
        run.upload(Flow(arg.flow.files, (), arg.flow.data, arg.flow.unknown))
        text = arg.text.lstrip("@")
        if re.fullmatch(r"[\w.:-]+|\[[0-9a-fA-F:]+\]", text) and ("." in text or ":" in text or text == "localhost"):
            run.host(text, dynamic=arg.dynamic)
        elif arg.dynamic:
            run.host(text, dynamic=True)
    run.network()
    return REMOTE_FLOW


def _http(run: Run, name: str, args: list[Arg]) -> Flow:
    options, positional = split_options(args, "aAovd", {"auth", "auth-type", "output", "session", "verify", "cert"})
    for value in option_values(options, "-o", "--output"):
        run.write(value, REMOTE_FLOW, fetched=True)
    for value in option_values(options, "--cert", "--cert-key", "--session"):
        run.read(value)
    if positional and re.fullmatch(r"[A-Z]+", positional[0].text):
        positional = positional[1:]
    if not positional:
        return NO_FLOW
    url = positional[0]
    run.upload(url.flow)
    run.url(url.part("localhost" + url.text if url.text.startswith(":") else url.text), default_scheme="http")
    for item in positional[1:]:
        match = re.match(r"^[^=:@]*(?::=@|=@|@)(.+)$", item.text)
        if match is not None:
            run.upload_file(item.part(match.group(1)))
        else:
            run.upload(item.flow)
    run.upload(run.stdin)
    return REMOTE_FLOW


def _openssl(run: Run, name: str, args: list[Arg]) -> Flow:
    sub = args[0].text if args else ""
    rest = args[1:]
    values = {rest[i].text: rest[i + 1] for i in range(len(rest) - 1) if rest[i].text.startswith("-")}
    if sub in ("s_client", "s_time"):
        target = values.get("-connect")
        host = (target.text.rsplit(":", 1)[0] if target else "") or "localhost"
        run.host(host, dynamic=bool(target and target.dynamic))
        run.upload(run.stdin)
        return REMOTE_FLOW
    if sub == "s_server":
        run.unknown_host()
        return REMOTE_FLOW
    flow = run.read_content(values["-in"]) if "-in" in values else run.stdin
    for key in ("-inkey", "-key", "-signkey", "-CAkey", "-kfile"):
        if key in values:
            run.read(values[key])
    if "-out" in values:
        run.write(values["-out"], flow)
        return NO_FLOW
    return flow


def _opener(run: Run, name: str, args: list[Arg]) -> Flow:
    for arg in args:
        if "://" in arg.text or arg.text.startswith("www."):
            run.url(arg, default_scheme="http")
    return NO_FLOW


def _mail(run: Run, name: str, args: list[Arg]) -> Flow:
    options, positional = split_options(args, "aAsbcrSfFqTuiBZ", {"attach", "server", "from", "to", "header", "body"})
    for flag, value in options:
        if value is None:
            continue
        if flag in ("-a", "-A", "--attach"):
            run.upload_file(value)
        elif flag == "--server":
            run.host(value.text.split(":")[0], dynamic=value.dynamic)
        elif flag == "--body" and value.text.startswith("@"):
            run.upload_file(value.part(value.text[1:]))
    if not has_option(options, "--server"):
        run.unknown_host()
    for arg in positional:
        run.upload(arg.flow)
    run.upload(run.stdin)
    return NO_FLOW


def _database(run: Run, name: str, args: list[Arg]) -> Flow:
    options, positional = split_options(args, "hpUdPufecDS", {"host", "port", "username", "dbname", "file", "command"})
    hosts = [v for v in option_values(options, "-h", "--host")]
    hosts += [a for a in positional if "://" in a.text]
    for value in option_values(options, "-f", "--file"):
        run.read(value)
    for host in hosts:
        if "://" in host.text:
            run.url(host)
        elif host.text not in ("localhost", "127.0.0.1", "::1") or host.dynamic:
            run.host(host.text, dynamic=host.dynamic)
    if any(a.dynamic for a in positional):
        run.unknown_host()
    if hosts:
        run.upload(run.stdin)
    return UNKNOWN_FLOW


NETWORK_PROGRAMS = (
    declare("curl", _curl),
    declare("wget", _wget),
    declare("socat", _socat),
    declare("telnet", _telnet),
    declare("nc ncat netcat nc.openbsd nc.traditional", _netcat),
    declare("ftp sftp lftp tftp", _ftp),
    declare("ssh mosh autossh", _ssh),
    declare("scp", _scp),
    declare("rsync", _rsync),
    declare(_DNS_TOOLS, _lookup),
    declare("http https xh xhs httpie", _http),
    declare("openssl", _openssl),
    declare("open xdg-open start sensible-browser firefox chromium", _opener),
    declare("mail mailx sendmail mutt swaks msmtp", _mail),
    declare("psql mysql mariadb mongo mongosh redis-cli sqlcmd", _database),
)
"""Network programs: HTTP clients, raw sockets, remote shells and copies, mail, databases, DNS tools."""

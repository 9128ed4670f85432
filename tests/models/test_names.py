from monitor.models._names import split_mcp_name


def test_split_mcp_name() -> None:
    assert split_mcp_name("mcp__github__get_file_contents") == ("github", "get_file_contents")
    assert split_mcp_name("mcp__my-server__do__it") == ("my-server", "do__it")
    assert split_mcp_name("Bash") is None
    assert split_mcp_name("mcp__github") is None
    assert split_mcp_name("mcp____tool") is None

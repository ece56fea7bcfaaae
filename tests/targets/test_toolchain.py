"""Toolchain identity and version ranges (xe_forge/targets/base.py): how knowledge-base entries
scoped to 'triton-xpu>=3.6,<3.7.2' are matched against what the user has installed."""

from __future__ import annotations

import pytest
from packaging.version import InvalidVersion, Version

from xe_forge.targets.base import Toolchain, parse_version, split_toolchain_spec


@pytest.mark.parametrize(("name", "version", "spec", "expected"), [
    ("triton-xpu", "3.6.0", "triton-xpu>=3.6,<3.7.2", True),
    ("triton-xpu", "3.7.1", "triton-xpu>=3.6,<3.7.2", True),
    ("triton-xpu", "3.7.2", "triton-xpu>=3.6,<3.7.2", False),
    ("triton-xpu", "3.5.1", "triton-xpu>=3.6,<3.7.2", False),
    ("triton-xpu", "3.6.0+git1a2b", "triton-xpu>=3.6,<3.7.2", True),  # local tag of a source build
    ("triton-xpu", "3.7.2+gitdeadbeef", "triton-xpu>=3.7.2", True),
    ("triton-xpu", "3.6.0", "triton>=3.0", False),  # same module name, different toolchain
    ("triton", "3.9.0", "triton-xpu>=3.0", False),
    ("triton", "3.9.0", "triton>=3.4", True),
    ("triton", "3.3.1", "triton>=3.4", False),
    ("triton-xpu", "3.6.0", "triton-xpu", True),  # a bare name admits every version
    ("triton-xpu", "3.6.0", "triton-xpu==3.6.*", True),
    ("triton-xpu", "3.6.0", None, True),
    ("triton", "3.9.0", "", True),
])
def test_satisfies(name, version, spec, expected):
    assert Toolchain(name=name, version=version).satisfies(spec) is expected


def test_local_and_dev_tags_are_ignored_when_parsing():
    assert parse_version("3.6.0+git1a2b") == Version("3.6.0")
    assert parse_version(" 3.5.0.dev20250101 ") >= Version("3.5.0")
    with pytest.raises(InvalidVersion):
        parse_version("unknown")


def test_split_toolchain_spec():
    assert split_toolchain_spec("triton-xpu>=3.6,<3.7.2") == ("triton-xpu", ">=3.6,<3.7.2")
    assert split_toolchain_spec("triton-xpu >= 3.6") == ("triton-xpu", ">= 3.6")
    assert split_toolchain_spec("triton") == ("triton", "")


@pytest.mark.parametrize(("spec", "fragment"), [
    ("pytorch-triton-xpu>=3.4", "must start with 'triton' or 'triton-xpu'"),
    ("tritonx>=3", "must start with"),
    (">=3.6", "must start with"),
    ("triton=>3.6", "invalid version specifier '=>3.6'"),
    ("triton-xpu>=three", "invalid version specifier"),
])
def test_split_toolchain_spec_errors(spec, fragment):
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(").replace("*", r"\*")):
        split_toolchain_spec(spec)


def test_satisfies_surfaces_a_malformed_range():
    with pytest.raises(ValueError, match="must start with"):
        Toolchain(name="triton-xpu", version="3.6.0").satisfies("xpu>=3.6")


def test_toolchain_prints_name_and_version():
    assert str(Toolchain(name="triton-xpu", version="3.7.2")) == "triton-xpu 3.7.2"

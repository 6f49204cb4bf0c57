"""The chip of a trace's device name, by the catalog's names and aliases."""

import pytest

from pipeline.catalogs.hardware import load_catalog
from pipeline.errors import UnknownHardware
from pipeline.traces.device import chip_of, trace_chip

CATALOG = load_catalog()


@pytest.mark.parametrize("name, chip", [
    ("NVIDIA H100 80GB HBM3", "h100"),
    ("AMD Instinct MI300X", "mi300x"),
    ("AMD Instinct MI300X VF", "mi300x"),
    ("NVIDIA A100-SXM4-80GB", "a100"),
    ("NVIDIA B200", "b200"),
    ("Acme Tensor 9000", None),
    # another variant of a catalog chip is not that chip: its rates differ (--hardware names it)
    ("NVIDIA H100 PCIe", None),
    ("NVIDIA H100 NVL", None),
    ("NVIDIA H200 NVL", None),
    ("NVIDIA A100-SXM4-40GB", None),
    ("NVIDIA A100 80GB PCIe", None),
])  # fmt: skip
def test_device_names_are_catalog_chips(name, chip):
    assert chip_of(name, CATALOG) == chip


def test_the_devices_the_kernels_ran_on_else_all():
    devices = [(0, "NVIDIA H100 80GB HBM3"), (1, "NVIDIA B200")]
    assert trace_chip(devices, {1}, CATALOG) == "b200"
    with pytest.raises(
        UnknownHardware, match=r"'NVIDIA B200', 'NVIDIA H100 80GB HBM3'.*--hardware"
    ):
        trace_chip(devices, {5}, CATALOG)  # ids that match none: every device, two chips
    assert trace_chip([(0, "AMD Instinct MI300X")], {2}, CATALOG) == "mi300x"
    with pytest.raises(UnknownHardware, match="names no device"):
        trace_chip([], set(), CATALOG)

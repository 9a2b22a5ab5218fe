"""Model-file reader guards that the hostile-archive tests leave to another guard: each
test here fails when its guard is removed (the others would still refuse the file, but
later, or with a message that does not say why)."""
import numpy as np
import pytest

from test_io_hostile import (_load_peak, _members, _raw_npy_header, _write, _zero_bomb,
                             saved)  # noqa: F401  (the fixture)


@pytest.mark.parametrize("odd", ["sub\\{}.npy", "..{}.npy", "{}..npy"])
def test_backslashes_and_parent_references_in_member_names_are_refused(saved, tmp_path,
                                                                        odd):
    # (no "/" in these names: the folder check alone would not refuse them)
    _, src, _ = saved
    members = _members(src)
    coef = next(n for n in members if "coef" in n)
    members[odd.format(coef[:-4])] = members.pop(coef)
    msg, _ = _load_peak(_write(tmp_path / "odd.npz", members))
    assert "odd.npz: unexpected archive member" in msg


@pytest.mark.parametrize("member", ["a0_coef_.npy", "__meta__.npy"])
def test_a_member_declaring_more_than_the_limit_is_named(tmp_path, member):
    # the zip directory's size of the member is refused first, naming the member,
    # before its .npy header is read (a header member has a limit of its own)
    gb = 1 << 30
    bomb = tmp_path / "bomb.npz"
    bomb.write_bytes(_zero_bomb(member, gb))
    msg, peak = _load_peak(bomb)
    assert f"bomb.npz: member {member} declares {gb} bytes uncompressed" in msg
    assert peak < 32 << 20


def test_an_npz_archive_without_a_header_is_not_a_model(tmp_path):
    path = tmp_path / "plain.npz"
    np.savez(path, coef=np.zeros(3))
    msg, _ = _load_peak(path)
    assert msg == f"{path} is an npz archive but not a structsvm model (no header)"


def test_a_negative_npy_shape_is_refused_as_such(saved, tmp_path):
    # (-2, -4) holds 8 values by the product of its sizes; without the shape check the
    # file fails later, in a reshape, with a message that does not say why
    _, src, _ = saved
    members = _members(src)
    members["__meta__.npy"] = _raw_npy_header((-2, -4), "<f8") + bytes(64)
    msg, _ = _load_peak(_write(tmp_path / "shape.npz", members))
    assert msg == f"{tmp_path / 'shape.npz'}: array __meta__.npy has shape (-2, -4)"


def test_bytes_after_an_arrays_data_are_refused(saved, tmp_path):
    # the header member is listed nowhere, so only its own .npy header bounds it
    _, src, _ = saved
    members = _members(src)
    members["__meta__.npy"] += bytes(100)
    msg, _ = _load_peak(_write(tmp_path / "tail.npz", members))
    assert "tail.npz: array __meta__.npy declares shape" in msg and "its member holds" in msg

"""The app on a table on a Dask cluster (explorer.distributed_table): the same fit, cards and scores as in memory."""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

distributed = pytest.importorskip("distributed")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from craft import CRAFT, CraftInputError, cards, metrics, profiles  # noqa: E402
from craft.cli import main  # noqa: E402
from explorer import distributed_table  # noqa: E402
from explorer.services import FitParams, fit_schema, fitted_table  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None)
    with cluster, distributed.Client(cluster) as c:
        yield c


def mixed_table(n: int, seed: int) -> pd.DataFrame:
    """Three planted groups over numeric and categorical columns, a class column, missing cells."""
    rng = np.random.default_rng(seed)
    group = rng.integers(3, size=n)
    table = pd.DataFrame({
        "x": rng.normal(3.0 * group, 1.0), "y": rng.normal(0.0, 1.0, n), "z": rng.normal(-2.0 * group, 1.0),
        "colour": np.array(["red", "green", "blue"])[group], "shape": rng.choice(["round", "square", "flat"], n),
        "kind": np.array(["p", "q", "r"])[group],
    })
    table.loc[rng.random(n) < 0.05, "y"] = np.nan
    return table


def write_parts(folder, table: pd.DataFrame, n_parts: int):
    folder.mkdir()
    for i, piece in enumerate(np.array_split(np.arange(len(table)), n_parts)):
        pq.write_table(pa.Table.from_pandas(table.iloc[piece], preserve_index=False), folder / f"part-{i:02d}.parquet")
    return folder


@pytest.fixture(autouse=True)
def _forget_opened_tables():
    """Every table a test opens is forgotten after it: the app serves an open cluster table to every session,
    so one left open would be the table of the next module's app tests."""
    yield
    distributed_table._OPEN.clear()


@pytest.fixture
def opened(tmp_path, client, monkeypatch):
    # A sample smaller than the table, so that the sample's views are of a real sample.
    monkeypatch.setattr(distributed_table, "SAMPLE_ROWS", 300)
    table = mixed_table(900, 4)
    folder = write_parts(tmp_path / "parts", table, 4)
    spec = distributed_table.Spec(source=str(folder), scheduler=client.scheduler.address)
    return table, distributed_table.open_table(spec, client=client)


def fit_both(table, opened, **params):
    data = distributed_table.loaded_data(opened)
    schema, _ = fit_schema(data, {"kind": "ignored"}, "kind")
    chosen = FitParams().replace(**params)
    outcome = distributed_table.fit(opened, schema, chosen)
    assert outcome.error is None, outcome.error
    X, used = fitted_table(table, schema)
    memory = CRAFT(categorical=used, **chosen.estimator_kwargs()).fit(X)
    return outcome.model, memory, X


def test_open_counts_every_row_and_samples_uniformly(opened):
    table, handle = opened
    assert handle.n_rows == 900 and handle.part_rows.tolist() == [225] * 4
    assert len(handle.sample) == 300 and np.all(np.diff(handle.sample_rows) > 0)
    pd.testing.assert_frame_equal(handle.sample, table.iloc[handle.sample_rows].reset_index(drop=True), check_dtype=False)
    assert "900 rows in 4 part(s)" in handle.where() and "1 worker(s)" in handle.where()
    assert "uniform sample of 300 rows" in handle.computed_from()


@pytest.mark.parametrize("params", [dict(size_by="k", k=3, seed=1), dict(size_by="lambda", lam=8.0, seed=0, m=0.4)])
def test_the_app_fit_on_a_parquet_folder_equals_craft_in_memory(opened, params):
    table, handle = opened
    shown, memory, _ = fit_both(table, handle, **params)
    every = distributed_table.full_labels(shown).compute().to_numpy()
    np.testing.assert_array_equal(every, memory.labels_)
    # The views that need rows: the fit's own labels of the sample's rows.
    np.testing.assert_array_equal(shown.labels_, memory.labels_[handle.sample_rows])
    np.testing.assert_array_equal(shown.feature_mask_, memory.feature_mask_)
    np.testing.assert_array_equal(shown.cluster_sizes_, memory.cluster_sizes_)
    assert shown.objective_ == pytest.approx(memory.objective_, rel=1e-12)


def test_cards_full_data_statistics_equal_the_in_memory_cards(opened):
    table, handle = opened
    shown, memory, _ = fit_both(table, handle, size_by="k", k=3, seed=2)
    for cluster in range(memory.n_clusters_):
        pd.testing.assert_frame_equal(cards.numeric_evidence(shown, cluster), cards.numeric_evidence(memory, cluster),
                                      rtol=1e-9)
        pd.testing.assert_frame_equal(cards.level_evidence(shown, cluster), cards.level_evidence(memory, cluster),
                                      rtol=1e-9)
    pd.testing.assert_frame_equal(profiles.cluster_profiles(shown), profiles.cluster_profiles(memory), rtol=1e-9)
    # The metrics against a label column, from every row.
    assert distributed_table.full_metrics(handle, shown, "kind") == metrics.evaluate(table["kind"], memory.labels_)
    # A card drawn from the sample's rows says the cluster's size and the table's rows of the whole fit.
    sample_X, _ = fitted_table(handle.sample, shown.schema_)
    for cluster in range(memory.n_clusters_):
        card = cards.cluster_card(shown, sample_X, cluster)
        assert (card.size, card.n_rows) == (int(memory.cluster_sizes_[cluster]), len(table))
        assert f"holds {int(memory.cluster_sizes_[cluster]):,} of {len(table):,} rows" in card.words.summary


def test_unreachable_scheduler_is_one_message(tmp_path, capsys):
    folder = write_parts(tmp_path / "parts", mixed_table(40, 0), 2)
    spec = distributed_table.Spec(source=str(folder), scheduler="tcp://127.0.0.1:9", connect_timeout=1.0)
    with pytest.raises(CraftInputError, match=r"cannot reach the Dask scheduler at 'tcp://127.0.0.1:9'"):
        distributed_table.open_table(spec)
    code = main(["app", str(folder), "--scheduler", "tcp://127.0.0.1:9", "--connect-timeout", "1", "--no-browser"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "cannot reach the Dask scheduler at 'tcp://127.0.0.1:9'" in err


def _damage(file):
    content = bytearray(file.read_bytes())
    content[4:40] = b"\xff" * 36  # the first page header, right after the magic bytes: the footer still reads
    file.write_bytes(bytes(content))


def test_damaged_part_is_named_when_opened_and_when_fitted(tmp_path, client, capsys):
    table = mixed_table(200, 1)
    folder = write_parts(tmp_path / "parts", table, 3)
    _damage(folder / "part-01.parquet")
    spec = distributed_table.Spec(source=str(folder), scheduler=client.scheduler.address)
    with pytest.raises(CraftInputError, match=r"cannot read '.*part-01.parquet': it is not a readable Parquet file"):
        distributed_table.open_table(spec, client=client)
    # A part damaged after the table was opened: the fit's outcome says which, the page keeps working.
    fine = write_parts(tmp_path / "fine", table, 3)
    handle = distributed_table.open_table(distributed_table.Spec(source=str(fine), scheduler=client.scheduler.address),
                                          client=client)
    _damage(fine / "part-02.parquet")
    schema, _ = fit_schema(distributed_table.loaded_data(handle), {}, None)
    outcome = distributed_table.fit(handle, schema, FitParams().replace(size_by="k", k=2))
    assert outcome.model is None and "part-02.parquet" in outcome.error and "not a readable Parquet file" in outcome.error
    # The command line: one line, exit 2, before any server starts.
    _damage(folder / "part-00.parquet")
    (folder / "part-00.parquet").write_bytes((folder / "part-00.parquet").read_bytes()[:-30])
    assert main(["app", str(folder), "--local-workers", "1", "--no-browser"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "part-00.parquet" in err


def test_export_writes_every_label_and_scoring_writes_a_folder(opened, tmp_path):
    table, handle = opened
    shown, memory, X = fit_both(table, handle, size_by="k", k=3, seed=0)
    assert distributed_table.write_labels(handle, shown, str(tmp_path / "labels")) == 900
    written = pd.read_parquet(tmp_path / "labels").sort_values("row")
    np.testing.assert_array_equal(written["row"], np.arange(900))
    np.testing.assert_array_equal(written["cluster"], memory.labels_)
    assert distributed_table.score_folder(handle, shown, handle.spec.source, str(tmp_path / "scored")) == 900
    scored = pd.read_parquet(tmp_path / "scored").sort_values("row").reset_index(drop=True)
    expected = memory.assign(table)
    np.testing.assert_array_equal(scored["row"], np.arange(900))
    np.testing.assert_array_equal(scored["cluster"], expected["cluster"])
    np.testing.assert_allclose(scored["cost"], expected["cost"], rtol=1e-9)


def test_a_worker_lost_mid_fit_is_the_outcome_s_message(opened, monkeypatch):
    """The page shows the fit's error and stays usable: the fit returns it, it does not raise."""
    from craft.distributed import DaskCRAFT

    _, handle = opened

    def lost(self, *args, **kwargs):
        raise distributed.KilledWorker("('fit-pass', 3)", SimpleNamespace(address="tcp://127.0.0.1:1234"), 3)

    monkeypatch.setattr(DaskCRAFT, "fit", lost)
    schema, _ = fit_schema(distributed_table.loaded_data(handle), {}, None)
    outcome = distributed_table.fit(handle, schema, FitParams().replace(size_by="k", k=2))
    assert outcome.model is None
    assert "a worker or the scheduler at" in outcome.error and "was lost (KilledWorker" in outcome.error

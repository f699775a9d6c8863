"""No import circles, except the ones Celery and Django impose (and any named in KNOWN, each with what removes it).

A module that enqueues a Celery task imports the task, and the task calls back into that module's functions: inside
one capability package, circles that all pass through its task module are allowed. Any other circle (between
capabilities, or through
a third module) means a function lives in the wrong place; the error names the modules to untangle. The graph is
grimp's (import-linter's engine) and counts imports inside functions too.

One level up, the capability packages under ``annotation/`` depend on each other in one direction only: with the
layer that puts them together left out (``AGGREGATION_LAYER``), no two packages import each other, directly or
through others, even where no module circle does. A page that shows two capabilities' figures is the higher one's;
a function both sides need lives in the lower one or in the shared core."""

import grimp
import networkx as nx


def import_graph() -> nx.DiGraph:
    graph = grimp.build_graph("annotation", "tasks", "rescue_annot", cache_dir=None)  # always the tree as it is
    directed = nx.DiGraph()
    for module in graph.modules:
        directed.add_node(module)
        for imported in graph.find_modules_directly_imported_by(module):
            directed.add_edge(module, imported)
    return directed


def import_cycles(directed: nx.DiGraph | None = None) -> list[list[str]]:
    directed = import_graph() if directed is None else directed
    return [sorted(component) for component in nx.strongly_connected_components(directed) if len(component) > 1]


# Django finds an app's tables only through its models module, so annotation.models imports the models modules of
# the capabilities that keep their own tables, and each of those imports the shared tables it points at.
APP_MODELS = "annotation.models"

# Known circles, each with the change that removes it. Nothing may be added here without one.
KNOWN: set[frozenset[str]] = set()


def django_models_pair(component: list[str]) -> bool:
    return (
        len(component) == 2
        and APP_MODELS in component
        and all(m == APP_MODELS or m.endswith(".models") for m in component)
    )


def celery_pair(component: list[str], graph: nx.DiGraph) -> bool:
    """A capability's task module and the modules of the same package that enqueue its tasks: every circle passes
    through the task module (without it the modules import each other in no circle)."""
    packages = {module.rsplit(".", 1)[0] for module in component}
    tasks = [module for module in component if module.endswith(".celery_tasks")]
    if len(packages) != 1 or len(tasks) != 1:
        return False
    rest = graph.subgraph(module for module in component if module != tasks[0])
    return nx.is_directed_acyclic_graph(rest)


def test_no_module_imports_itself_through_others_except_a_celery_task_and_its_caller():
    graph = import_graph()
    circles = [
        component
        for component in import_cycles(graph)
        if not celery_pair(component, graph) and not django_models_pair(component) and frozenset(component) not in KNOWN
    ]
    assert not circles, "import circles: " + "; ".join(" <-> ".join(c) for c in circles)


def test_the_graph_is_read_at_all():
    """The check above passes on an empty graph; this one does not."""
    cycles = import_cycles()
    assert ["annotation.preannotate.celery_tasks", "annotation.preannotate.services"] in cycles


# Left out of the package check, each for its reason (the module check above still reads every one of them).
AGGREGATION_LAYER = {
    "annotation.<module>": "annotation's own top-level modules: the shared core every capability builds on (models, "
    "selectors, services, schema, taxonomy, jobs, audit, roles, labels, starting, groups, ...) and the aggregators "
    "annotation.urls and annotation.views, which mount capabilities' pages",
    "annotation.api.urls": "the REST router at /api/v1/, mounted before every capability's API: a router may route "
    "any capability's view, while every capability's API is built on annotation.api's shared DRF parts",
    "rescue_annot": "the project's settings, URLs (they mount every capability's routes) and Celery app",
    "tasks": "the benchmark tasks and their profiles: what a release is evaluated on, not a capability",
}

# Known mutual dependencies between capability packages, each with the change that removes it. Nothing may be added
# here without one.
KNOWN_PACKAGE_PAIRS: set[frozenset[str]] = set()


def capability_of(module: str, packages: set[str]) -> str | None:
    """The capability package under ``annotation/`` a module belongs to; None for the aggregation layer."""
    parts = module.split(".")
    if module in AGGREGATION_LAYER or parts[0] in AGGREGATION_LAYER or parts[0] != "annotation":
        return None
    top = ".".join(parts[:2])
    return top if top in packages else None  # annotation itself, or "annotation.<module>": not a package


def package_graph(directed: nx.DiGraph | None = None) -> nx.DiGraph:
    """Capability package -> the packages it imports, each edge with the module imports behind it."""
    directed = import_graph() if directed is None else directed
    packages = {".".join(m.split(".")[:2]) for m in directed if m.startswith("annotation.") and m.count(".") >= 2}
    packaged = nx.DiGraph()
    for module, imported in directed.edges:
        a, b = capability_of(module, packages), capability_of(imported, packages)
        if a is None or b is None or a == b:
            continue
        if not packaged.has_edge(a, b):
            packaged.add_edge(a, b, imports=[])
        packaged.edges[a, b]["imports"].append(f"{module} -> {imported}")
    return packaged


def test_capability_packages_depend_on_each_other_in_one_direction_only():
    packaged = package_graph()
    circles = [
        sorted(component)
        for component in nx.strongly_connected_components(packaged)
        if len(component) > 1 and frozenset(component) not in KNOWN_PACKAGE_PAIRS
    ]
    detail = [
        f"{' <-> '.join(c)}: "
        + "; ".join(i for a, b in packaged.subgraph(c).edges for i in packaged.edges[a, b]["imports"])
        for c in circles
    ]
    assert not circles, "capability packages that import each other: " + " | ".join(detail)


def test_the_package_graph_is_read_at_all():
    """The check above passes on an empty graph, or on one that lost the capabilities' imports; this one does not."""
    packaged = package_graph()
    assert packaged.has_edge("annotation.meaning", "annotation.agreement")
    assert (
        "annotation.meaning.selectors -> annotation.agreement.textfields"
        in (packaged.edges["annotation.meaning", "annotation.agreement"]["imports"])
    )
    assert not {"annotation.models", "annotation.api.urls", "rescue_annot", "tasks"} & set(packaged)


def test_no_test_module_imports_another():
    """Shared helpers live in conftest.py or tests/builders/; a test module importing another runs its tests twice
    in a reader's head and couples files that should stand alone."""
    import ast
    from pathlib import Path

    tests = Path(__file__).resolve().parent
    found = []
    for path in sorted(tests.rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            for name in names:
                if any(part.startswith("test_") for part in name.split(".")):
                    found.append(f"{path.relative_to(tests)} imports {name}")
    assert not found, found

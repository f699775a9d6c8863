"""No import circles, except the ones Celery and Django impose (and any named in KNOWN, each with what removes it).

A module that enqueues a Celery task imports the task, and the task calls back into that module's functions: inside
one capability package, circles that all pass through its task module are allowed. Any other circle (between
capabilities, or through
a third module) means a function lives in the wrong place; the error names the modules to untangle. The graph is
grimp's (import-linter's engine) and counts imports inside functions too."""

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

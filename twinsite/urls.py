from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path, re_path
from django.views.generic import RedirectView

from chat import views as chat_views
from digest import views as digest_views
from knowledge import views as knowledge_views
from ops.metrics import metrics_view
from twinsite import api


class FaviconView(RedirectView):
    permanent = True

    def get_redirect_url(self, *args, **kwargs) -> str:
        # at request time: with DEBUG=0 the name comes from collectstatic's manifest, and a
        # missing manifest must not stop the URLconf (and `manage.py check`) from loading
        return static("favicon.svg")


urlpatterns = [
    path("", chat_views.chat_page, name="chat"),
    path("favicon.ico", FaviconView.as_view()),
    path("new/", chat_views.new_conversation, name="chat-new"),
    path("start/", chat_views.conversation_start, name="chat-start"),  # the first question's conversation
    path("embed.js", chat_views.embed_script, name="embed-script"),
    path("embed/", chat_views.embed_page, name="embed"),
    path("embed/config", chat_views.embed_config, name="embed-config"),
    path("embed/start", chat_views.embed_start, name="embed-start"),
    path("i18n/", include("django.conf.urls.i18n")),  # set_language: the page's language switch
    path("sources/<slug:slug>/", knowledge_views.source_page, name="source"),
    path("why/<int:message_id>/", chat_views.why_panel, name="why"),
    path("digest/<str:token>/", digest_views.confirm, name="digest-confirm"),  # a digest's approve/reject link
    path("api/", api.api_urls()),
    re_path(r"^api/", api.unknown_path),  # the API's JSON 404 for any other path under it
    path("admin/login/", chat_views.admin_login),  # throttled per client address
    path("admin/", admin.site.urls),
    path("metrics", metrics_view, name="metrics"),  # Prometheus; token or staff (ops.metrics)
]

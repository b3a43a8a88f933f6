"""Social accounts and connect links (spec §4, CONTRACT.md §7). Thin: parse, one service or
selector call, render."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import services
from accounts.api.serializers import (
    AccountCheckOutput,
    AudioListOutput,
    BoardListOutput,
    ConnectBrandingInput,
    ConnectBrandingOutput,
    ConnectLinkCreateInput,
    ConnectLinkOutput,
    InstagramAudioQuery,
    NoQuery,
    SocialAccountDetailOutput,
    SocialAccountListOutput,
    SocialAccountOutput,
    SuccessOutput,
)
from accounts.branding import Branding, branding_get, branding_set
from accounts.connect import connect_link_create, connect_link_delete
from accounts.disconnect import account_disconnect
from accounts.selectors import account_get_any, account_list
from audit.actors import actor_of_request
from core.idempotency import idempotent
from core.query import UNKNOWN_PARAMETER, parse_query
from workspaces.authentication import access_of
from workspaces.roles import Permission

UNREACHABLE = OpenApiResponse(
    description="The platform could not be reached (`code: platform_unavailable`); retry later."
)
ID_PARAM = OpenApiParameter("id", OpenApiTypes.STR, OpenApiParameter.PATH, description="Account id")


class SocialAccountViewSet(viewsets.GenericViewSet):
    schema_tags = ["Social accounts"]
    lookup_value_regex = "[^/]+"
    required_permissions = {
        "list": Permission.ACCOUNTS_READ,
        "retrieve": Permission.ACCOUNTS_READ,
        "destroy": Permission.ACCOUNTS_MANAGE,
        "check": Permission.ACCOUNTS_MANAGE,
        "instagram_audio": Permission.POSTS_DRAFT,
        "pinterest_boards": Permission.POSTS_DRAFT,
    }

    @extend_schema(
        operation_id="listSocialAccounts",
        summary="List connected social accounts",
        description="Every account of the workspace, oldest first. Tokens are never returned.",
        responses={200: SocialAccountListOutput, 400: UNKNOWN_PARAMETER},
    )
    def list(self, request: Request) -> Response:
        parse_query(request.query_params, NoQuery)
        accounts = account_list(workspace_id=access_of(request).workspace.id)
        return Response({"accounts": SocialAccountOutput(accounts, many=True).data})

    @extend_schema(
        operation_id="getSocialAccount",
        summary="Get one social account",
        description=(
            "The account, whatever its status: `active`, `unauthorized`, or `disconnected` (a disconnected account "
            "is no longer listed by GET /social-accounts and no other account operation finds it, but this one "
            "does, so its id in old posts and analytics can still be looked up). 404 when it is not an account "
            "of this workspace. Tokens are never returned."
        ),
        parameters=[ID_PARAM],
        responses={200: SocialAccountDetailOutput, 400: UNKNOWN_PARAMETER},
    )
    def retrieve(self, request: Request, pk: str) -> Response:
        parse_query(request.query_params, NoQuery)
        account = account_get_any(workspace_id=access_of(request).workspace.id, account_id=pk)
        return Response(SocialAccountDetailOutput(account).data)

    @extend_schema(
        operation_id="disconnectSocialAccount",
        summary="Disconnect a social account",
        description=(
            "Disconnects the account: its stored tokens are dropped (and revoked at the platform where it has a "
            "revoke call; `tokenRevocation` says how that went, and a failed revoke never blocks the disconnect); "
            "its entries that were not sent yet (PENDING entries of scheduled or queued posts, and entries a "
            "worker claimed but had not started sending) fail with errorCode `account_disconnected`, their posts "
            "finishing with their usual events; entries already being sent finish as they do; its ACTIVE "
            "recurring series pause (`pauseReason` CONNECTION_REMOVED) and its posting queue is removed; "
            "`account.disconnected` is emitted once. The account's posts, entries and analytics stay: the account "
            "answers `status: disconnected` here and in GET /social-accounts/{id}, and reconnecting the same "
            "platform account through a connect link brings it back with the same id. Idempotent: a repeat "
            "answers 200 with the same record and changes nothing. 404 when it is not an account of this "
            "workspace."
        ),
        parameters=[ID_PARAM],
        responses={200: SocialAccountDetailOutput},
    )
    def destroy(self, request: Request, pk: str) -> Response:
        account = account_disconnect(
            workspace_id=access_of(request).workspace.id, account_id=pk, actor=actor_of_request(request)
        )
        return Response(SocialAccountDetailOutput(account).data)

    @extend_schema(
        operation_id="checkSocialAccount",
        summary="Check a FACEBOOK page account's token now",
        description=(
            "`id` is the account id or the FACEBOOK `pageId` (the result carries the account's own `id`). "
            "A rejected token marks the account `unauthorized` and emits `account.unauthorized` once; a working "
            "token clears the mark. 400 `not_facebook_page` for other platforms; 502 when the platform is "
            "unreachable."
        ),
        parameters=[
            OpenApiParameter("id", OpenApiTypes.STR, OpenApiParameter.PATH, description="Account id or FACEBOOK pageId")
        ],
        request=None,
        responses={200: AccountCheckOutput, 502: UNREACHABLE},
    )
    @action(detail=True, methods=["post"])
    @idempotent
    def check(self, request: Request, pk: str) -> Response:
        result = services.account_check(workspace_id=access_of(request).workspace.id, id_or_page_id=pk)
        return Response(AccountCheckOutput(result).data)

    @extend_schema(
        operation_id="searchInstagramAudio",
        summary="Search audio for INSTAGRAM Reels",
        description=(
            "Audio cleared for third-party publishing; trending audio when `searchQuery` is omitted. Only for "
            "INSTAGRAM accounts with `supportsInstagramAudio` (connected through FACEBOOK login); otherwise 400 "
            "`instagram_audio_unavailable`. 400 `audio_search_rejected` when the platform rejects the search."
        ),
        parameters=[ID_PARAM, InstagramAudioQuery],
        responses={200: AudioListOutput, 502: UNREACHABLE},
    )
    @action(detail=True, methods=["get"], url_path="instagram-audio")
    def instagram_audio(self, request: Request, pk: str) -> Response:
        query = parse_query(request.query_params, InstagramAudioQuery)
        items = services.account_instagram_audio(
            workspace_id=access_of(request).workspace.id,
            account_id=pk,
            audio_type=query["audioType"],
            query=query.get("searchQuery", ""),
        )
        return Response(AudioListOutput({"audio": items}).data)

    @extend_schema(
        operation_id="listPinterestBoards",
        summary="List the boards a PINTEREST account can pin to",
        description=(
            "Every board, secret ones included. 404 when the account is not found or not PINTEREST; 400 "
            "`account_unauthorized` (reconnect the account) or `board_request_refused` when the platform refuses."
        ),
        parameters=[ID_PARAM],
        responses={200: BoardListOutput, 502: UNREACHABLE, 400: UNKNOWN_PARAMETER},
    )
    @action(detail=True, methods=["get"], url_path="pinterest-boards")
    def pinterest_boards(self, request: Request, pk: str) -> Response:
        parse_query(request.query_params, NoQuery)
        boards = services.account_pinterest_boards(workspace_id=access_of(request).workspace.id, account_id=pk)
        return Response(BoardListOutput({"boards": boards}).data)


class ConnectLinkViewSet(viewsets.GenericViewSet):
    schema_tags = ["Connect links"]
    lookup_field = "token"
    lookup_value_regex = "[^/]+"
    required_permissions = {"create": Permission.ACCOUNTS_MANAGE, "destroy": Permission.ACCOUNTS_MANAGE}

    @extend_schema(
        operation_id="createConnectLink",
        summary="Create a white-label connect link",
        description=(
            "A page at `url` where an end user connects accounts into this workspace, valid 24 hours, in the "
            "workspace's connect branding (GET /connect-branding). The body is optional: `redirectUrl` sends the "
            "browser back to you with the outcome when the flow ends, `platforms` narrows what the page offers. "
            "The token is shown only here (and to a retry with the same `Idempotency-Key` within 24 hours, "
            "which answers this same body; it is kept encrypted until then)."
        ),
        request=ConnectLinkCreateInput,
        responses={201: ConnectLinkOutput},
    )
    @idempotent
    def create(self, request: Request) -> Response:
        data = ConnectLinkCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        issued = connect_link_create(
            workspace_id=access_of(request).workspace.id,
            redirect_url=data.validated_data.get("redirectUrl"),
            platforms=data.validated_data.get("platforms"),
        )
        body = ConnectLinkOutput(
            {
                "url": issued.url,
                "token": issued.token,
                "expiresAt": issued.expires_at,
                "redirectUrl": issued.redirect_url or None,
                "platforms": issued.platforms,
            }
        ).data
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(
        operation_id="deleteConnectLink",
        summary="Delete a connect link",
        description="Its pages answer 404 from now on. 404 when unknown or of another workspace.",
        parameters=[OpenApiParameter("token", OpenApiTypes.STR, OpenApiParameter.PATH)],
        responses={200: SuccessOutput},
    )
    def destroy(self, request: Request, token: str) -> Response:
        connect_link_delete(workspace_id=access_of(request).workspace.id, token=token)
        return Response({"success": True})


def _branding_body(branding: Branding) -> dict[str, object]:
    return ConnectBrandingOutput(
        {
            "displayName": branding.display_name or None,
            "logoUrl": branding.logo_url or None,
            "accentColor": branding.accent_color or None,
            "supportUrl": branding.support_url or None,
            "platforms": list(branding.platforms),
            "updatedAt": branding.updated_at,
        }
    ).data


class ConnectBrandingView(APIView):
    """The workspace's connect-page branding: one record per workspace, read and replaced whole."""

    schema_tags = ["Connect links"]
    required_permissions = {"get": Permission.ACCOUNTS_READ, "put": Permission.ACCOUNTS_MANAGE}

    @extend_schema(
        operation_id="getConnectBranding",
        summary="Get the connect pages' branding",
        description=(
            "How the workspace's hosted connect pages look: name, logo, accent colour, support link and the "
            "platforms they offer. A workspace that never set one answers the defaults (nulls, all twelve "
            "platforms, `updatedAt` null)."
        ),
        responses={200: ConnectBrandingOutput, 400: UNKNOWN_PARAMETER},
    )
    def get(self, request: Request) -> Response:
        parse_query(request.query_params, NoQuery)
        return Response(_branding_body(branding_get(workspace_id=access_of(request).workspace.id)))

    @extend_schema(
        operation_id="setConnectBranding",
        summary="Replace the connect pages' branding",
        description=(
            "Replaces the branding whole: a field left out (or null) goes back to its default. Applies at once "
            "to every page of every link of the workspace, links already handed out included. 400 lists every "
            "problem (each message names its field); `media_not_found` when `logoUrl` is not an upload of this "
            "workspace. Links made before a change of `platforms` offer what both still allow."
        ),
        request=ConnectBrandingInput,
        responses={200: ConnectBrandingOutput},
    )
    def put(self, request: Request) -> Response:
        data = ConnectBrandingInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        branding = branding_set(
            workspace_id=access_of(request).workspace.id,
            display_name=values.get("displayName"),
            logo_url=values.get("logoUrl"),
            accent_color=values.get("accentColor"),
            support_url=values.get("supportUrl"),
            platforms=values.get("platforms"),
            actor=actor_of_request(request),
        )
        return Response(_branding_body(branding))

import { describe, expect, it } from "vitest";
import { createPartnerClient, PartnerApiError, requestAppToken, unwrap } from "../../sdk/src/index";
import { BASE, dispatch } from "../helpers/http";
import { registerClient } from "../helpers/oauth";

// The SDK's app token (sdk/src/app-token.ts; docs/guides/oauth.md, The app as itself) against the Worker: the client
// credentials grant by either registered method, its token taken by the client on the app's routes, and a refusal
// read as a PartnerApiError with the token endpoint's sentence.

const options = { baseUrl: `${BASE}/api/v1`, fetch: (request: Request) => dispatch(request) };

describe("the SDK's app token", () => {
  it("is asked for with Basic credentials, or in the body, and opens the app's routes to the client", async () => {
    const basic = await registerClient({ token_endpoint_auth_method: "client_secret_basic" });
    const token = await requestAppToken(
      { clientId: basic.client_id, clientSecret: basic.client_secret ?? "" },
      options,
    );
    expect(token).toEqual({
      access_token: expect.stringMatching(/^at_app_/),
      token_type: "Bearer",
      expires_in: 3600,
      scope: "app",
    });
    const client = createPartnerClient(token.access_token, options);
    await expect(unwrap(client.GET("/app/connections"))).resolves.toEqual({ data: [], has_more: false });

    const post = await registerClient();
    const inBody = await requestAppToken(
      { clientId: post.client_id, clientSecret: post.client_secret ?? "", authMethod: "client_secret_post" },
      options,
    );
    expect(inBody.access_token).toMatch(/^at_app_/);
  });

  it("throws the token endpoint's refusal as a PartnerApiError with its sentence", async () => {
    const post = await registerClient();
    const refusal = await requestAppToken({ clientId: post.client_id, clientSecret: post.client_secret ?? "" }, options)
      .then(() => undefined)
      .catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(PartnerApiError);
    expect(refusal).toMatchObject({
      status: 401,
      message: "This client authenticates with client_secret_post: send client_id and client_secret in the form body.",
    });
    const wrong = requestAppToken(
      { clientId: post.client_id, clientSecret: "wrong", authMethod: "client_secret_post" },
      options,
    );
    await expect(wrong).rejects.toMatchObject({ status: 401, message: "The client secret is not correct." });
  });
});
